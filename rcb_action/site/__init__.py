"""The static leaderboard site: ``rcb site build RESULTS_DIR ... --out DIR``.

Pages are rendered from the jinja2 templates and assets in the checkout's ``site/``
folder (``$RCB_SITE_DIR`` overrides); the output needs no server and makes no
requests outside itself. :func:`window_ranking` is the reference for the
contamination window that the browser recomputes.
"""

from rcb_action.site._build import SiteBuild, build_site, fmt_number, render_site
from rcb_action.site._inputs import SiteInputs, build_time, load_results, results_fingerprint
from rcb_action.site._pages import SiteData, build_site_data
from rcb_action.site._paths import SITE_DIR_ENV, site_dir
from rcb_action.site._reproduction import (
    DIMENSIONS,
    REPRODUCTION_FILE,
    STAGES,
    ReproductionView,
    read_reproduction,
    reproduction_view,
)
from rcb_action.site._window import (
    MIN_WINDOW_SNIPPETS,
    WindowResult,
    WindowRow,
    default_window,
    window_data,
    window_ranking,
)

__all__ = [
    "DIMENSIONS",
    "MIN_WINDOW_SNIPPETS",
    "REPRODUCTION_FILE",
    "SITE_DIR_ENV",
    "STAGES",
    "ReproductionView",
    "SiteBuild",
    "SiteData",
    "SiteInputs",
    "WindowResult",
    "WindowRow",
    "build_site",
    "build_site_data",
    "build_time",
    "default_window",
    "fmt_number",
    "load_results",
    "read_reproduction",
    "render_site",
    "reproduction_view",
    "results_fingerprint",
    "site_dir",
    "window_data",
    "window_ranking",
]
