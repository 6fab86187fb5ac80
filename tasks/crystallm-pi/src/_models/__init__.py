from .PKV_model import *
from .Prepend_model import *
from .Slider_model import *
try:
    from ..__scripts_in_dev.Slider_model_xai import *
except ImportError:
    pass