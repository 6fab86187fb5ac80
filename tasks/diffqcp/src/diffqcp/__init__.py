from .qcp import (
    HostQCP as HostQCP
)

from .problem_data import (
    QCPStructureCPU as QCPStructureCPU
)