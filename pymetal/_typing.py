"""Type aliases used in pymetal's annotations.

Imported by type checkers only (``if TYPE_CHECKING:``), so that annotations
cost nothing at import time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeAlias, Union

import numpy as np
import numpy.typing as npt

from .arrays.array import Array

#: A Python scalar (weakly typed in operations, as in the Array API standard).
Scalar: TypeAlias = Union[bool, int, float, complex]
#: Anything pymetal turns into an array: a pymetal Array, a NumPy array, nested sequences, a scalar.
ArrayLike: TypeAlias = Union[Array, npt.ArrayLike]
#: A dtype: a pymetal dtype (``pm.float32``), a NumPy dtype or type, its name, or None (the default).
DTypeLike: TypeAlias = Union[npt.DTypeLike, None]
#: A shape: an int or a sequence of ints.
ShapeLike: TypeAlias = Union[int, Sequence[int]]
#: An axis, several axes, or None (all).
Axes: TypeAlias = Union[int, Sequence[int], None]
#: NumPy's dtype object.
DType: TypeAlias = np.dtype
#: FFT normalisation.
Norm: TypeAlias = Literal["backward", "ortho", "forward"]
