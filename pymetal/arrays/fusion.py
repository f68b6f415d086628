"""pm.fuse: one MSL kernel for a Python function of elementwise ops and trailing reductions.

    @pm.fuse
    def layer_norm(x, w, b):
        m = pm.mean(x, axis=-1, keepdims=True)
        return (x - m) / pm.sqrt(pm.var(x, axis=-1, keepdims=True) + 1e-5) * w + b

A call traces the function once per signature (the arguments' dtypes, shapes and
strides, and the values of Python scalar arguments) with proxy objects: the array
library's own functions run on them (their dtype rules, weak scalars, mean/var/std
as the library composes them), and at the point where the library would launch a
kernel, a hook in _elementwise / _reduce hands the op to the tracer instead. The
recorded graph becomes MSL that calls the same functors (Shaders/ops.h, reduce.h)
as the library's kernels, so the values are the library's. Constants (Python
scalars, the row length mean divides by) are kernel parameters, so the MSL text
depends only on the graph's structure, dtypes, ranks and broadcast pattern; it is
compiled once per text (pm.compile and its disk cache).

One kernel thread computes one row: the reductions of each level (var needs the
mean first) are one pass over the row each, in 16 lanes combined as a tree like
the library's row reduction (Shaders/reduce.h), then the elementwise outputs are
written. Without reductions a thread computes one element. On a GPU (or with
reduce.GPU_SHAPES forced) a threadgroup computes one row instead (fusion_gpu.py).

Unsupported inside a fused function (indexing, reshapes, matmul, non-elementwise
calls, Python control flow on array values): a clear FuseError (a TypeError) at
trace time, never a silent fallback.
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from . import elementwise as _ew
from . import fusion_gpu as _gpu
from . import interop as _interop
from . import reduce as _red
from .kernels import lookup as _jit
from . import optable as _ops
from .. import dtypes as _dt
from .array import Array
from .construct import asarray

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class FuseError(TypeError):
    """A construct pm.fuse cannot compile into one kernel."""


_LANES = 16        # PM_RED_LANES of Shaders/reduce.h: the row reduction's accumulators
_BLOCK = 1024      # elements per block of a row reduction (then blocks per group)
_SPLIT = 16384     # the CPU backend splits dispatches of this many threads over its cores
_MAX_TRACES = 64   # traces kept per fused function


# ---- the graph ---------------------------------------------------------------------------

class _Node:
    """One value of the traced function. kind: leaf, const, cast, unary, binary, ternary,
    reduce. space: "C" (made of inputs and constants only), "E" (elementwise over the
    full shape, depends on a reduction), "R" (one value per row, reduced axes kept as 1s),
    "O" (one value per row, reduced axes dropped)."""
    __slots__ = ("kind", "args", "dtype", "shape", "space", "level", "aux")

    def __init__(self, kind, args, dtype, shape, space, aux=None):
        self.kind, self.args, self.dtype, self.shape, self.space, self.aux = kind, args, dtype, shape, space, aux
        self.level = max([a.level for a in args], default=0) + (kind == "reduce")


class Traced:
    """What a fused function's array arguments are while it is traced."""
    __slots__ = ("_pm_trace", "_node")

    def __init__(self, tracer, node):
        self._pm_trace, self._node = tracer, node

    _dtype = property(lambda self: self._node.dtype)
    dtype = _dtype
    _shape = property(lambda self: self._node.shape)
    shape = _shape
    ndim = property(lambda self: len(self._node.shape))
    _size = property(lambda self: int(np.prod(self._node.shape, dtype=np.int64)))
    size = _size
    _buf = property(lambda self: self._pm_trace)  # ._buf.device, as the library asks of an array

    def astype(self, dtype, copy=True):
        return self._pm_trace.astype(self, _dt.check_dtype(dtype))

    def reshape(self, *shape):
        return self._pm_trace.reshape(self, shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape)

    def sum(self, axis=None, dtype=None, keepdims=False):
        from . import reduce as _reduce
        return _reduce.sum(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def mean(self, axis=None, keepdims=False):
        from . import reduce as _reduce
        return _reduce.mean(self, axis=axis, keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        from . import reduce as _reduce
        return _reduce.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        from . import reduce as _reduce
        return _reduce.min(self, axis=axis, keepdims=keepdims)

    def var(self, axis=None, correction=0.0, keepdims=False, ddof=0):
        from . import reduce as _reduce
        return _reduce.var(self, axis=axis, correction=correction or ddof, keepdims=keepdims)

    def std(self, axis=None, correction=0.0, keepdims=False, ddof=0):
        from . import reduce as _reduce
        return _reduce.std(self, axis=axis, correction=correction or ddof, keepdims=keepdims)

    def __bool__(self):
        raise FuseError("a fused function cannot branch on array values (bool() of a traced array): "
                        "use pm.where(condition, x, y) instead of if/else")

    def __float__(self):
        raise FuseError("a fused function cannot convert a traced array to a Python number; "
                        "keep it an array (use pm.where for choices)")

    __int__ = __index__ = __complex__ = __float__

    def __len__(self):
        raise FuseError("len() of a traced array: use x.shape[0] (shapes are known while tracing)")

    def __iter__(self):
        raise FuseError("iterating over an array is not supported inside pm.fuse (it is indexing)")

    def __getitem__(self, key):
        raise FuseError("indexing (x[...]) is not supported inside pm.fuse: only elementwise ops, where, "
                        "astype and reductions over trailing axes fuse; index outside the fused function")

    __setitem__ = __getitem__

    def __array__(self, *args, **kwargs):
        raise FuseError("a traced array cannot become a NumPy array inside pm.fuse (.numpy(), np.asarray)")

    def __getattr__(self, name):
        if name.startswith("__"):  # protocol probes (copy, NumPy) find nothing
            raise AttributeError(name)
        what = "a function that is not elementwise (it asked for the array's %s)" % name if name.startswith("_") \
            else "x.%s" % name
        raise FuseError("%s is not supported inside pm.fuse: only elementwise ops, where, astype and "
                        "sum/mean/max/min/var/std over trailing axes fuse; call it outside the fused function" % what)

    def __repr__(self):
        return "Traced(shape=%r, dtype=%s)" % (self._node.shape, _dt.NAMES.get(self._node.dtype))

    __hash__ = object.__hash__


# Array's unary operators and NumPy ufuncs (np.exp(x), np.float32(2) * x) run the library's
# functions, which the hooks hand to the tracer.
for _m in ("__neg__", "__pos__", "__abs__", "__invert__"):
    setattr(Traced, _m, getattr(Array, _m))
Traced.__array_ufunc__ = _interop._array_ufunc  # type: ignore[attr-defined]  # NumPy ufuncs on traced arrays


def _operators():
    def binop(name):
        return (lambda self, other: _ew.binary(name, self, other),
                lambda self, other: _ew.binary(name, other, self))
    for py, name in _ew._OPERATORS.items():
        op, rop = binop(name)
        setattr(Traced, "__%s__" % py, op)
        setattr(Traced, "__r%s__" % py, rop)
    for cmp, name in (("eq", "equal"), ("ne", "not_equal"), ("lt", "less"), ("le", "less_equal"),
                      ("gt", "greater"), ("ge", "greater_equal")):
        setattr(Traced, "__%s__" % cmp, binop(name)[0])


_operators()


def _no_out(out):
    if out is not None:
        raise FuseError("out= is not supported inside pm.fuse; the fused function returns new arrays")


class _Tracer:
    """Records the graph of one call; the hooks of the array library call its methods."""

    def __init__(self, device):
        self.device = device
        self.leaves = []      # Arrays read by the kernel (arguments and captured arrays)
        self._leaf_ids = {}
        self.full: Any = None  # the shape the reductions reduce (their operand's shape)
        self.k: Any = None     # how many trailing axes they reduce

    # -- nodes
    def leaf(self, a, argument=False):
        i = None if argument else self._leaf_ids.get(id(a))
        if i is None:
            i = self._leaf_ids[id(a)] = len(self.leaves)
            self.leaves.append(a)
        return _Node("leaf", (), a._dtype, a._shape, "C", i)

    def const(self, value, dt, shape=(), space="C"):
        return _Node("const", (), dt, tuple(shape), space, _ew.scalar_value(value, dt))

    def node(self, v, dt=None):
        """The node of an operand: a traced array, a captured Array (read at every call,
        as jax.jit captures arrays) or a Python scalar of dtype dt."""
        if isinstance(v, Traced):
            if v._pm_trace is not self:
                raise FuseError("a traced array of another pm.fuse call was used here")
            return v._node
        if isinstance(v, Array):
            return self.leaf(v)
        if _ew.is_scalar(v) or isinstance(v, np.generic):
            return self.const(v, dt)
        return self.leaf(_ew.as_array(v, self.device))

    def wrap(self, node):
        return Traced(self, node)

    def _make(self, kind, args, dt, aux=None):
        shape = _ew.broadcast_shapes(*(a.shape for a in args))
        return self.wrap(_Node(kind, args, dt, shape, self._space(args, shape), aux))

    def _space(self, args, shape):
        spaces = {a.space for a in args} - {"C"}
        if not spaces:
            return "C"
        if "O" in spaces:
            if len(spaces) > 1 or len(shape) > len(self.full) - self.k:
                raise FuseError("a reduction result without keepdims=True was combined with an array that has "
                                "the reduced axes; use keepdims=True inside pm.fuse")
            return "O"
        if "E" in spaces:
            return "E"
        # per-row values, unless an input varies along the reduced axes
        return "R" if len(shape) <= len(self.full) and all(d == 1 for d in shape[len(shape) - self.k:]) \
            and self.k <= len(shape) else "E"

    # -- the array library's hooks
    def astype(self, x, dt):
        n = self.node(x)
        if n.dtype == dt:
            return x if isinstance(x, Traced) else self.wrap(n)
        return self.wrap(_Node("cast", (n,), dt, n.shape, n.space))

    def unary(self, name, x, ct, out=None):
        _no_out(out)
        op = _ops.UNARY[name]
        n = self.node(x)
        if ct is None:  # integers: floor & co. are the values, isnan & co. known (as _elementwise.unary)
            if op.result != "bool":
                return self.wrap(n)
            return self.wrap(self.const(name == "isfinite", _dt.bool_, n.shape, n.space))
        if ct == n.dtype and op.functor == "Identity":
            return self.wrap(n)
        if n.dtype != ct:
            n = self.astype(self.wrap(n), ct)._node
        return self._make("unary", (n,), _ops.result_dtype(op, ct), op.functor)

    def binary(self, name, a, b, ct, rdt, out=None):
        _no_out(out)
        nodes = []
        for v in (a, b):
            n = self.node(v, ct)
            if n.dtype != ct:
                n = self.astype(self.wrap(n), ct)._node
            nodes.append(n)
        return self._make("binary", tuple(nodes), rdt, _ops.BINARY[name].functor)

    def constant_like(self, x, value):
        n = self.node(x)
        return self.wrap(self.const(value, _dt.bool_, n.shape, n.space))

    def ternary(self, name, cdt, c, x1, x2, dt):
        nodes = []
        for v, want in ((c, cdt), (x1, dt), (x2, dt)):
            n = self.node(v, want)
            if n.dtype != want:
                n = self.astype(self.wrap(n), want)._node
            nodes.append(n)
        return self._make("ternary", tuple(nodes), dt, _ops.TERNARY[name])

    def reduce(self, name, x, axes, keepdims, acc, out_dtype, shape):
        n = self.node(x)
        if n.space == "O" or (n.space == "R" and n.shape != self.full):  # (an R value of full shape: rows of 1)
            raise FuseError("a reduction of a reduction's result is not supported inside pm.fuse")
        nd = len(n.shape)
        k = len(axes)
        if axes != tuple(range(nd - k, nd)):
            raise FuseError("pm.fuse reduces trailing axes only (axis=-1, axis=(-2, -1), axis=None); got axes %r "
                            "of a %d-d array: move the axes last (pm.moveaxis) outside the fused function" % (axes, nd))
        if self.full is None:
            self.full, self.k = n.shape, k
        elif (self.full, self.k) != (n.shape, k):
            raise FuseError("all reductions in one fused function must reduce arrays of one shape over the same "
                            "trailing axes (got shape %r over %d axes, then %r over %d)" % (
                                self.full, self.k, n.shape, k))
        space = "R" if keepdims else "O"
        if 0 in n.shape:  # as _reduce.reduce: the identity (max/min of nothing is an error there)
            if k and 0 in n.shape[nd - k:] and name in ("max", "min"):
                raise ValueError("zero-size array to reduction operation %s which has no identity" % name)
            identity = {"sum": 0, "prod": 1, "all": True, "any": False}.get(name, 0)
            return self.wrap(self.const(identity, out_dtype, shape, space))
        functor = _ops.REDUCE[name][0]
        r = self.wrap(_Node("reduce", (n,), acc, tuple(shape), space, functor))
        return r if acc == out_dtype else self.astype(r, out_dtype)

    def reshape(self, x, shape):
        n = self.node(x)
        shape = tuple(shape)
        if n.space == "R" and shape == n.shape[:len(n.shape) - self.k]:  # dropping kept axes (_reduce._moment)
            return self.wrap(_Node("cast", (n,), n.dtype, shape, "O"))
        raise FuseError("reshape is not supported inside pm.fuse (only dropping a reduction's kept axes)")


# ---- from graph to MSL ----------------------------------------------------------------------

_MSL = _dt.MSL_TYPE_NAMES


def _const_expr(c, slot):
    """MSL reading constant c from 8-byte parameter slot `slot` (see _const_bits)."""
    t = _MSL[c.dtype]
    v = "P.v[%d]" % slot
    k = _dt.kind(c.dtype)
    if k == "c":
        return "cfloat(as_type<float>(uint(%s)), as_type<float>(uint(ulong(%s) >> 32)))" % (v, v)
    if k == "f":
        return "as_type<%s>(%s(%s))" % (t, "uint" if c.dtype.itemsize == 4 else "ushort", v)
    return "%s(%s)" % (t, v)


def _const_bits(value, dt):
    k = _dt.kind(dt)
    if k in "fc":
        return int.from_bytes(np.asarray(value, dtype=dt).tobytes().ljust(8, b"\0"), "little", signed=True)
    v = int(value)
    return v - (1 << 64) if v >= 1 << 63 else v


class _Program:
    """The MSL of a traced graph, its parameters and launch geometry."""

    def __init__(self, tracer, outputs):
        self.t = tracer
        self.outputs = outputs
        self.cpu = tracer.device.backend == "cpu"  # rows spread over the CPU's cores (params)
        self.k = tracer.k or 0
        self.full = self._full_shape(outputs)
        if not self.k and self.cpu and len(self.full) >= 2 and any(
                a._size > 1 and not (a._cc and a._shape == self.full) for a in tracer.leaves):
            # Broadcast or strided inputs without reductions: a thread per row of the last
            # axis on the CPU, so that their offsets cost a division per row, not per element.
            self.k = 1
        self.nd = len(self.full)
        self.no = self.nd - self.k   # outer (row) dimensions
        self.rows = int(np.prod(self.full[:self.no], dtype=np.int64))
        self.n = int(np.prod(self.full[self.no:], dtype=np.int64))
        # Row reductions on a GPU: a threadgroup per row (fusion_gpu.py), as the library's reductions choose
        self.gpu = bool(tracer.k) and _red._gpu_shapes(tracer.device) and self.rows <= _gpu.MAX_ROWS
        self.tg = _gpu.tg_size(self.n) if self.gpu else 1
        self.tg_decls: list[str] = []
        self.sites = {}    # (leaf, "F" or "O") -> (kind, stride vector)
        self.consts = []   # const nodes, in slot order
        self._const_slot = {}
        self.stride_base = self.nconst_base = 0  # set by build() once the sites are known

    def _full_shape(self, outputs):
        t = self.t
        if t.full is not None:
            full = t.full
        else:
            full = _ew.broadcast_shapes(*(o.shape for o in outputs)) if outputs else ()
            t.full, t.k = full, 0
        rshape = full[:len(full) - t.k] + (1,) * t.k
        oshape = full[:len(full) - t.k]
        for o in outputs:
            want = {"R": rshape, "O": oshape}.get(o.space, full)
            if o.shape != want:
                raise FuseError("a fused function's outputs must have the shape of its computation: %r is %r, "
                                "expected %r" % (o.space, o.shape, want))
        return full

    # -- operands
    def site(self, leaf, align):
        key = (leaf.aux, align)
        s = self.sites.get(key)
        if s is None:
            a = self.t.leaves[leaf.aux]
            target = self.full if align == "F" else self.full[:self.no]
            if _ew.broadcast_shapes(a._shape, target) != target:
                raise FuseError("input of shape %r does not broadcast to %r" % (a._shape, target))
            st = _ew.elem_strides(a, target)
            if align == "O":
                st = st + (0,) * self.k
            if a._cc and a._shape == self.full and align == "F":
                kind = "full"
            elif not any(st):
                kind = "zero"
            elif self.k == 1 and st[-1] in (0, 1):
                kind = "unit" if st[-1] else "row"  # along a row: consecutive, or one value (vectorisable)
            else:
                kind = "gen"
            s = self.sites[key] = (kind, st, len(self.sites))
        return s

    def const_slot(self, c):
        slot = self._const_slot.get(id(c))
        if slot is None:
            slot = self._const_slot[id(c)] = len(self.consts)
            self.consts.append(c)
        return slot

    # -- code
    def source(self):
        t = self.t
        body: list[str] = []
        glob: dict = {}   # node -> variable, for values computed once per thread
        self._counter = 0
        self._pre = body
        self.tg_decls = []

        def var():
            self._counter += 1
            return "v%d" % self._counter

        def emit(node, ctx, scope, out):
            """Variable holding node's value; ctx: "E" (element jj of the row) or "R"/"O" (the row)."""
            row = node.space in ("R", "O")
            if row or node.kind == "const":
                scope = glob
                out = self._pre
                ctx = node.space if row else "R"
            key = (id(node), ctx)  # an input is read per element or per row: two values
            hit = scope.get(key)
            if hit is not None:
                return hit
            ty = _MSL[node.dtype]
            v = var()
            if node.kind == "leaf":
                kind, _, si = self.site(node, "O" if ctx == "O" else "F")
                if kind == "zero":
                    off = "0"
                elif kind == "full":
                    off = ("r * n + jj" if self.k else "r") if ctx == "E" else "r * n"
                else:
                    off = "ro%d" % si
                    self._need_site.add(si)
                    base = self.stride_base + si * self.nd
                    if ctx == "E" and kind == "unit":
                        off += " + long(jj)"
                    elif ctx == "E" and self.k == 1 and kind == "gen":
                        off += " + long(jj) * s%d" % si
                        self._need_stride.add(si)
                    elif ctx == "E" and self.k:
                        off += " + pm_off(jj, P.v + 3, P.v + %d, %d, %d)" % (base, self.no, self.nd)
                out.append("const %s %s = in%d[%s];" % (ty, v, node.aux, off))
            elif node.kind == "const":
                out.append("const %s %s = %s;" % (ty, v, _const_expr(node, self.nconst_base + self.const_slot(node))))
            elif node.kind == "cast":
                a = emit(node.args[0], ctx, scope, out)
                out.append("const %s %s = convert<%s>(%s);" % (ty, v, ty, a))
            elif node.kind in ("unary", "binary"):
                args = [emit(a, ctx, scope, out) for a in node.args]
                out.append("const %s %s = static_cast<%s>(%s()(%s));" % (ty, v, ty, node.aux, ", ".join(args)))
            elif node.kind == "ternary":
                args = [emit(a, ctx, scope, out) for a in node.args]
                out.append("const %s %s = %s()(%s);" % (ty, v, node.aux, ", ".join(args)))
            elif node.kind == "reduce":
                raise AssertionError("reduction used before its pass")  # levels order the passes
            scope[key] = v
            return v

        self._need_site, self._need_stride = set(), set()
        reductions = self._reductions()
        levels = sorted({r.level for r in reductions})
        for lvl in levels:
            group = [r for r in reductions if r.level == lvl]
            names = []
            for r in group:
                v = var()
                names.append(v)
                body.append("%s %s;" % (_MSL[r.dtype], v))
            if self.gpu:
                scope = dict(glob)
                inner: list[str] = []
                for i, r in enumerate(group):
                    inner.append(_gpu.accumulate(i, r, emit(r.args[0], "E", scope, inner)))
                body.extend(_gpu.level(group, names, inner, self.tg_decls))
                glob.update(((id(r), r.space), v) for r, v in zip(group, names))
                continue
            loop_main: list[str] = []
            loop_tail: list[str] = []
            for lines, jj in ((loop_main, "j + l"), (loop_tail, "j")):
                scope = dict(glob)
                inner = ["const ulong jj = %s;" % jj]
                for i, r in enumerate(group):
                    x = emit(r.args[0], "E", scope, inner)
                    a = _MSL[r.dtype]
                    inner.append("{ const %s e = static_cast<%s>(%s); p%d |= ROps<%s>::poisons(e); "
                                 "a%d[l] = %s::f(a%d[l], e); }" % (a, a, x, i, r.aux, i, r.aux, i))
                lines.extend(inner)
            # Three levels of 16 lanes (elements within blocks of _BLOCK, blocks within
            # groups of _BLOCK blocks, groups), each lane's serial chain at most 64 long as
            # in the library's passes of chunks: long rows keep a blocked sum's accuracy.
            # A row of up to _BLOCK elements is the library's one-chunk row kernel exactly
            # (the outer levels combine it with identities).
            def lanes(prefix, init=True):
                for i, r in enumerate(group):
                    a = _MSL[r.dtype]
                    body.append("%s %s%d[%d];" % (a, prefix, i, _LANES))
                    body.append("for (int l = 0; l < %d; l++) %s%d[l] = %s::template init<%s>();"
                                % (_LANES, prefix, i, r.aux, a))

            def fold(prefix, into, at):
                for i, r in enumerate(group):
                    body.append("for (int w = %d; w > 0; w /= 2) for (int l = 0; l < w; l++) %s%d[l] = "
                                "ROps<%s>::combine(%s%d[l], %s%d[l + w]);"
                                % (_LANES // 2, prefix, i, r.aux, prefix, i, prefix, i))
                    if into:
                        body.append("%s%d[%s %% %d] = ROps<%s>::combine(%s%d[%s %% %d], %s%d[0]);"
                                    % (into, i, at, _LANES, r.aux, into, i, at, _LANES, prefix, i))
            body.append("{")
            lanes("t")
            body.append(" ".join("bool p%d = false;" % i for i in range(len(group))))
            body.append("for (ulong m0 = 0, mb = 0; m0 < n; m0 += %d, mb++) {" % (_BLOCK * _BLOCK))
            body.append("const ulong mend = min(n, m0 + %dul);" % (_BLOCK * _BLOCK))
            lanes("c")
            body.append("for (ulong b0 = m0, cb = 0; b0 < mend; b0 += %d, cb++) {" % _BLOCK)
            body.append("const ulong bend = min(mend, b0 + %dul);" % _BLOCK)
            lanes("a")
            body.append("ulong j = b0;")
            body.append("for (; j + %d <= bend; j += %d) for (int l = 0; l < %d; l++) {" % (_LANES, _LANES, _LANES))
            body.extend("    " + s for s in loop_main)
            body.append("}")
            body.append("for (int l = 0; j < bend; j++, l++) {")
            body.extend("    " + s for s in loop_tail)
            body.append("}")
            fold("a", "c", "cb")
            body.append("}")
            fold("c", "t", "mb")
            body.append("}")
            fold("t", None, None)
            for i, r in enumerate(group):
                body.append("%s = ROps<%s>::finish(t%d[0], p%d);" % (names[i], r.aux, i, i))
            body.append("}")
            for r, v in zip(group, names):
                glob[(id(r), r.space)] = v
        # outputs
        elem = [(i, o) for i, o in enumerate(self.outputs) if o.space in ("C", "E")]
        for i, o in enumerate(self.outputs):
            if o.space in ("R", "O"):  # (on a GPU every thread has the row's values; one writes them)
                body.append("%sout%d[r] = %s;" % ("if (lid == 0) " if self.gpu else "", i, emit(o, o.space, glob, body)))
        if elem:
            if self.k:
                scope = dict(glob)
                inner = []
                for i, o in elem:
                    inner.append("out%d[r * n + jj] = %s;" % (i, emit(o, "E", scope, inner)))
                body.append(_gpu.LOOP if self.gpu else "for (ulong jj = 0; jj < n; jj++) {")
                body.extend("    " + s for s in inner)
                body.append("}")
            else:
                for i, o in elem:
                    body.append("out%d[r] = %s;" % (i, emit(o, "E", glob, body)))
        return body

    def _reductions(self):
        seen, out = set(), []

        def walk(n):
            if id(n) in seen:
                return
            seen.add(id(n))
            for a in n.args:
                walk(a)
            if n.kind == "reduce":
                out.append(n)
        for o in self.outputs:
            walk(o)
        return out

    def build(self):
        body = self.source()
        nsites = len(self.sites)
        self.stride_base = 3 + self.nd
        self.nconst_base = self.stride_base + self.nd * nsites
        body = self.source()  # again, with the constants' slots known (same sites, same order)
        t = self.t
        head = []
        params = []
        for i, a in enumerate(t.leaves):
            params.append("device const %s* in%d [[buffer(%d)]]" % (_MSL[a._dtype], i, i))
        for i, o in enumerate(self.outputs):
            params.append("device %s* out%d [[buffer(%d)]]" % (_MSL[o.dtype], i, len(t.leaves) + i))
        nslots = max(1, self.nconst_base + len(self.consts))
        params.append("constant FusedParams& P [[buffer(%d)]]" % (len(t.leaves) + len(self.outputs)))
        params.extend(_gpu.PARAMS if self.gpu else ["uint tid [[thread_position_in_grid]]"])
        # A thread per row; rows are spaced `step` threads apart so that a dispatch of few long
        # rows still reaches the thread count at which the CPU backend uses all its cores.
        if self.gpu:
            head.extend(self.tg_decls)
            head.append(_gpu.ROW)
        elif self.k:
            head.append("const ulong step = ulong(P.v[2]);")
            head.append("if (tid % step) return;")
            head.append("const ulong r = tid / step;")
        else:
            head.append("const ulong r = tid;")
        head.append("const ulong n = ulong(P.v[1]);")
        head.append("(void)n;")
        for si in sorted(self._need_site):
            base = self.stride_base + si * self.nd
            head.append("long ro%d = 0;" % si)
            if self.no:
                head[-1] = "const long ro%d = pm_off(r, P.v + 3, P.v + %d, 0, %d);" % (si, base, self.no)
            if si in self._need_stride:  # a local: P's memory might alias the outputs for the compiler
                head.append("const long s%d = P.v[%d];" % (si, base + self.nd - 1))
        src = ["struct FusedParams { long v[%d]; };" % nslots, _OFF] + [
            "[[kernel]] void pm_fused(%s) {" % ",\n        ".join(params)]
        src += ["    " + s for s in head + body] + ["}"]
        self.nslots = nslots
        return "\n".join(src) + "\n"

    def params(self):
        """The parameter bytes: rows, n, step, shape, strides per site, constants."""
        step = 1
        if self.k and self.cpu and not self.gpu and 1 < self.rows < _SPLIT and self.rows * self.n >= _SPLIT:
            step = -(-_SPLIT // self.rows)
        self.step = step
        v = [self.rows, self.n, step] + list(self.full)
        for (kind, st, si) in sorted(self.sites.values(), key=lambda s: s[2]):
            v += list(st)
        for c in self.consts:
            v.append(_const_bits(c.aux, c.dtype))
        v += [0] * (self.nslots - len(v))
        return np.asarray(v, dtype=np.int64).tobytes()


# Element offset of index q over dims [lo, hi) of a shape with per-dim element strides.
_OFF = """METAL_FUNC long pm_off(ulong q, constant long* shape, constant long* st, int lo, int hi) {
    long o = 0;
    for (int d = hi - 1; d >= lo; d--) { ulong s = ulong(shape[d]); o += long(q % s) * st[d]; q /= s; }
    return o;
}"""

_HEADER = None
_kernels: dict = {}   # MSL text -> Function
_lock = threading.Lock()


def _header():
    global _HEADER
    if _HEADER is None:
        seen: set = set()
        _HEADER = _jit.inline_header("elementwise.h", seen) + _jit.inline_header("reduce.h", seen)
    return _HEADER


def _kernel(src, device):
    fn = _kernels.get(src)
    if fn is None:
        from ..runtime import library as _library
        from ..runtime.function import Function
        with _lock:
            fn = _kernels.get(src)
            if fn is None:
                lib = _library.compile(_header() + "\n" + src, device=device)
                fn = _kernels[src] = Function(lib, "pm_fused", own=True)
    return fn


# ---- the decorator ------------------------------------------------------------------------------

class _Plan:
    __slots__ = ("fn", "leaves", "nargs", "params", "outs", "grid", "tg", "structure", "device")
    fn: Any
    leaves: Any
    nargs: Any
    params: Any
    outs: Any
    grid: Any
    tg: Any
    structure: Any
    device: Any


def _arg_key(v):
    if isinstance(v, Array):
        return (Array, v._dtype, v._shape, v._strides, v._cc)
    if isinstance(v, np.ndarray):
        return (np.ndarray, v.dtype, v.shape)
    if isinstance(v, np.generic):
        return (np.generic, v.dtype)
    if isinstance(v, (bool, int, float, complex)):
        return (type(v), repr(v))  # repr: -0.0 and nan are keys too
    try:
        hash(v)
    except TypeError:
        raise TypeError("pm.fuse: argument %r (%s) is neither an array nor a hashable static value"
                        % (v, type(v).__name__)) from None
    return (type(v), v)


class Fused:
    """A function compiled by pm.fuse (call it like the function)."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._plans: dict = {}
        self.traces = 0  # how many times the function was traced (tests read it)

    def __get__(self, obj, objtype=None):  # a fused method: the instance is a static argument
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        if any(isinstance(v, Traced) for v in list(args) + list(kwargs.values())):
            return self._fn(*args, **kwargs)  # called inside another fused function: part of its kernel
        key = (tuple(_arg_key(a) for a in args), tuple((k, _arg_key(v)) for k, v in sorted(kwargs.items())),
               _red.GPU_SHAPES)  # the kernel's shape may be forced (the tests run the GPU one on the CPU)
        plan = self._plans.get(key)
        # the kernel's inputs, in the order the trace made them (arguments, then keywords by name)
        arrays = [a if isinstance(a, Array) else asarray(a) for a in list(args) + [v for _, v in sorted(kwargs.items())]
                  if isinstance(a, (Array, np.ndarray, np.generic))]
        if plan is None:
            plan = self._trace(args, kwargs)
            if len(self._plans) >= _MAX_TRACES:
                self._plans.clear()
            self._plans[key] = plan
        return self._run(plan, arrays)

    def _trace(self, args, kwargs):
        from ..runtime.device import device as _device
        arrays = [a for a in list(args) + list(kwargs.values()) if isinstance(a, Array)]
        dev = arrays[0]._buf.device if arrays else _device()
        t = _Tracer(dev)
        nargs = 0

        def proxy(v):
            nonlocal nargs
            if isinstance(v, (Array, np.ndarray, np.generic)):
                nargs += 1
                return t.wrap(t.leaf(v if isinstance(v, Array) else asarray(v), argument=True))
            return v
        pargs = [proxy(a) for a in args]
        pkw = {k: proxy(v) for k, v in sorted(kwargs.items())}
        self.traces += 1
        res = self._fn(*pargs, **pkw)
        single = not isinstance(res, (tuple, list))
        outs = [res] if single else list(res)
        nodes = []
        for o in outs:
            if isinstance(o, Array):  # made without the arguments (x < 1000 for int8 x is all True): copied
                o = t.wrap(t.leaf(o))
            if not isinstance(o, Traced) or o._pm_trace is not t:
                raise FuseError("a fused function must return traced arrays computed from its array arguments "
                                "(a tuple or list of them for several); it returned %s" % type(o).__name__)
            nodes.append(o._node)
        prog = _Program(t, nodes)
        src = prog.build()
        plan = _Plan()
        plan.fn = _kernel(src, dev)
        plan.params = prog.params()
        plan.leaves = t.leaves[nargs:]  # captured arrays (the arguments' are passed per call)
        plan.nargs = nargs
        plan.outs = [(o.shape, o.dtype) for o in nodes]
        tg = _gpu.fit(prog.tg, plan.fn.max_threads_per_threadgroup) if prog.gpu else 1
        plan.grid = prog.rows * (tg if prog.gpu else prog.step)
        plan.tg = tg if prog.gpu else min(plan.grid, 256) if not prog.k else 1
        plan.structure = (single, type(res))
        plan.device = dev
        return plan

    def _run(self, plan, arrays):
        from .construct import _new
        outs = [_new(shape, dt, plan.device) for shape, dt in plan.outs]
        if plan.grid:
            plan.fn(*arrays, *plan.leaves, *outs, plan.params, grid=plan.grid, threadgroup=plan.tg)
        single, typ = plan.structure
        return outs[0] if single else typ(outs)


def fuse(fn: Callable[..., Any] | None = None, /) -> Any:
    """Compiles a function of arrays into one kernel (like cupy.fuse; jax.jit for elementwise code).

    The function may use the arithmetic and comparison operators, the elementwise
    functions (pm.exp, pm.maximum, ...), pm.where, astype, Python and NumPy scalars,
    broadcasting, and sum/mean/max/min/prod/all/any/var/std over the trailing axes
    (axis=-1, axis=(-2, -1) or all axes; keepdims) whose results may be used further.
    It is traced once per signature (dtypes, shapes, strides, Python scalars' values)
    with traced arrays; the MSL kernel is compiled once per structure (new shapes and
    scalar values reuse it). Values equal the unfused library's (the same functors and
    promotion); reductions are computed per row in one thread (16 lanes, as the
    library's row kernel), so long sums may differ from the library's chunked ones
    in the last bits. Indexing, reshapes, other functions and Python branches on array
    values raise FuseError. Arrays the function reads but does not take as arguments
    are captured when it is first traced (read at every call).

    Examples:
        >>> @pm.fuse
        ... def f(x, y):
        ...     return pm.exp(x) * y + 1.0
        >>> f(pm.asarray([0.0, 1.0]), pm.asarray([2.0, 3.0])).numpy().round(3)
        array([3.   , 9.155], dtype=float32)
    """
    if fn is None:
        return fuse
    if not callable(fn):
        raise TypeError("pm.fuse decorates a function, not %s" % type(fn).__name__)
    return Fused(fn)
