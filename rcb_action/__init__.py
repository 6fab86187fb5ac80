"""rcb: can a model turn a research paper into working code?

The pipeline, one sub-package per stage, data flowing one way:
``tasks -> prompts -> models -> splice -> sandbox -> scoring -> results -> report/site``.
"""

__version__ = "0.1.0"
