# Stand-in written for this task, not the authors' code: verl's package __init__ reads a
# version file and imports DataProto (tensordict), logging helpers and the Ray single
# controller. The task only imports verl.trainer.ppo.core_algos and verl.utils.torch_functional.
