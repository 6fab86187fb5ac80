from __future__ import annotations

__all__ = [
    "QCPStructureCPU",
    "ObjMatrixCPU"
]

from abc import abstractmethod

from jax import ShapeDtypeStruct
import jax.numpy as jnp
from jax.experimental.sparse import BCOO, BCSR
import equinox as eqx
import lineax as lx
from lineax import AbstractLinearOperator
from jaxtyping import Float, Integer, Bool, Array

from diffqcp.cones.canonical import ProductConeProjector

class QCPStructure(eqx.Module):

    # The following are needed for `_form_atoms` in `AbstractQCP`.
    n: eqx.AbstractVar[int]
    m: eqx.AbstractVar[int]
    N: eqx.AbstractVar[int]
    cone_projector: eqx.AbstractVar[ProductConeProjector]
    
    @abstractmethod
    def obj_matrix_init(self):
        pass
    
    @abstractmethod
    def constr_matrix_init(self):
        pass


class QCPStructureCPU(QCPStructure):
    """
    `P` is assumed to be the upper triangular part of the matrix in the quadratic form.
    """
    
    n: int
    m: int
    N: int
    cone_projector: ProductConeProjector
    is_batched: bool

    P_nonzero_rows: Integer[Array, "..."]
    P_nonzero_cols: Integer[Array, "..."]
    P_diag_mask: Bool[Array, "..."]
    P_diag_indices: Integer[Array, "..."]

    A_nonzero_rows: Integer[Array, "..."]
    A_nonzero_cols: Integer[Array, "..."]

    def __init__(
        self,
        P: Float[BCOO, "*batch n n"],
        A: Float[BCOO, "*batch n n"],
        cone_dims: dict[str, int | list[int] | list[float]],
        onto_dual: bool = True
    ):
        
        # NOTE(quill): checks on `cone_dims` done in `ProductConeProjector.__init__`
        self.cone_projector = ProductConeProjector(cone_dims, onto_dual=onto_dual)

        if not isinstance(P, BCOO):
            raise ValueError("The objective matrix `P` must be a `BCOO` JAX matrix,"
                             + f" but the provided `P` is a {type(P)}.")

        if P.n_batch == 0:
            self.is_batched = False
            self.obj_matrix_init(P)
        elif P.n_batch == 1:
            self.is_batched = True
            # Extract information from first matrix in the batch.
            # Strict requirement is that all matrices in the batch share
            # the same sparsity structure (holds via DPP, also maybe required by JAX?)
            self.obj_matrix_init(P[0])
        else:
            raise ValueError("The objective matrix `P` must have at most one batch dimension,"
                             + f" but the provided BCOO matrix has {P.n_batch} dimensions.")

        if not isinstance(A, BCOO):
            raise ValueError("The objective matrix `A` must be a `BCOO` JAX matrix,"
                             + f" but the provided `A` is a {type(A)}.")
        
        # NOTE(quill): could theoretically allow mismatch and broadcast
        #   (Just to keep in mind for the future; not needed now.)
        if A.n_batch != P.n_batch:
            raise ValueError(f"The objective matrix `P` has {P.n_batch} dimensions"
                             + f" while the constraint matrix `A` has {A.n_batch}"
                             + " dimensions. The batch dimensionality of `P` and `A`"
                             + " must match.")
        if self.is_batched:
            self.constr_matrix_init(A[0])
        else:
            self.constr_matrix_init(A)

        self.N = self.n + self.m + 1
    
    def obj_matrix_init(self, P: Float[BCOO, "n n"]):
        # TODO(quill): checks on P being upper triangular.
        #   (Might as well do since this structure is formed once.)
        self.n = jnp.shape(P)[0]
        self.P_nonzero_rows = P.indices[:, 0]
        self.P_nonzero_cols = P.indices[:, 1]
        self.P_diag_mask = P.indices[:, 0] == P.indices[:, 1]
        self.P_diag_indices = P.indices[:, 0][self.P_diag_mask]
        
    def constr_matrix_init(self, A: Float[BCOO, "m n"]):
        self.m = jnp.shape(A)[0]
        self.A_nonzero_rows = A.indices[:, 0]
        self.A_nonzero_cols = A.indices[:, 1]
            
    def form_obj(self, P_like: Float[BCOO, "n n"]) -> ObjMatrixCPU:
        diag_values = P_like.data[self.P_diag_mask]
        diag = jnp.zeros(self.n)
        diag = diag.at[self.P_diag_indices].set(diag_values)
        return ObjMatrixCPU(P_like, P_like.T, diag)


class ObjMatrixCPU(AbstractLinearOperator):
    P: Float[BCOO, "n n"]
    PT: Float[BCOO, "n n"]
    diag: Float[BCOO, " n"]
    in_struc: ShapeDtypeStruct

    def __init__(
        self,
        P: Float[BCOO, "n n"],
        PT: Float[BCOO, "n n"],
        diag: Float[BCOO, " n"]
    ):
        self.P, self.PT, self.diag = P, PT, diag
        n = jnp.shape(P)[0]
        self.in_struc = ShapeDtypeStruct(shape=(n,),
                                         dtype=P.data.dtype)
    
    def mv(self, vector):
        return self.P @ vector + self.PT @ vector - self.diag*vector
    
    def transpose(self):
        return self
    
    def as_matrix(self):
        raise NotImplementedError(f"{self.__class__.__name__}'s `as_matrix` method is"
                                  + " not yet implemented.")
    
    def in_structure(self):
        pass

    def out_structure(self):
        return self.in_structure()
    
# NOTE(rcb): the `type ObjMatrix = ObjMatrixCPU | ObjMatrixGPU` statement needs Python 3.12;
#   with the GPU classes removed it is a plain alias (see notes.md).
ObjMatrix = ObjMatrixCPU

@lx.is_symmetric.register(ObjMatrixCPU)
def _(op):
    return True
