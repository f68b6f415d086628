"""Examples for the docstrings of the elementwise functions (made in elementwise.py from
the operation table): the statements and the output of each, run as doctests
(tests/python/test_api_docs.py), so they are checked on every test run."""

ELEMENTWISE = {
    'abs': [
        'x = pm.asarray([-1.5, 0.0, 2.0])',
        'pm.abs(x)',
        'Array([1.5, 0. , 2. ], dtype=float32)',
    ],
    'negative': [
        'x = pm.asarray([-1.5, 0.0, 2.0])',
        'pm.negative(x)',
        'Array([ 1.5, -0. , -2. ], dtype=float32)',
    ],
    'positive': [
        'x = pm.asarray([-1.5, 0.0, 2.0])',
        'pm.positive(x)',
        'Array([-1.5,  0. ,  2. ], dtype=float32)',
    ],
    'sign': [
        'x = pm.asarray([-1.5, 0.0, 2.0])',
        'pm.sign(x)',
        'Array([-1.,  0.,  1.], dtype=float32)',
    ],
    'square': [
        'x = pm.asarray([-1.5, 0.0, 2.0])',
        'pm.square(x)',
        'Array([2.25, 0.  , 4.  ], dtype=float32)',
    ],
    'sqrt': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.sqrt(x)',
        'Array([0.70710677, 1.        , 1.4142135 ], dtype=float32)',
    ],
    'rsqrt': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.rsqrt(x).numpy().round(4)',
        'array([1.4142, 1.    , 0.7071], dtype=float32)',
    ],
    'reciprocal': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.reciprocal(x).numpy().round(4)',
        'array([2. , 1. , 0.5], dtype=float32)',
    ],
    'exp': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.exp(x).numpy().round(4)',
        'array([1.6487, 2.7183, 7.3891], dtype=float32)',
    ],
    'exp2': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.exp2(x).numpy().round(4)',
        'array([1.4142, 2.    , 4.    ], dtype=float32)',
    ],
    'expm1': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.expm1(x).numpy().round(4)',
        'array([0.6487, 1.7183, 6.3891], dtype=float32)',
    ],
    'log': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.log(x).numpy().round(4)',
        'array([-0.6931,  0.    ,  0.6931], dtype=float32)',
    ],
    'log2': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.log2(x).numpy().round(4)',
        'array([-1.,  0.,  1.], dtype=float32)',
    ],
    'log10': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.log10(x).numpy().round(4)',
        'array([-0.301,  0.   ,  0.301], dtype=float32)',
    ],
    'log1p': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.log1p(x).numpy().round(4)',
        'array([0.4055, 0.6931, 1.0986], dtype=float32)',
    ],
    'sin': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.sin(x).numpy().round(4)',
        'array([0.4794, 0.8415, 0.9093], dtype=float32)',
    ],
    'cos': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.cos(x).numpy().round(4)',
        'array([ 0.8776,  0.5403, -0.4161], dtype=float32)',
    ],
    'tan': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.tan(x).numpy().round(4)',
        'array([ 0.5463,  1.5574, -2.185 ], dtype=float32)',
    ],
    'asin': [
        'x = pm.asarray([-0.5, 0.0, 0.5])',
        'pm.asin(x).numpy().round(4)',
        'array([-0.5236,  0.    ,  0.5236], dtype=float32)',
    ],
    'acos': [
        'x = pm.asarray([-0.5, 0.0, 0.5])',
        'pm.acos(x).numpy().round(4)',
        'array([2.0944, 1.5708, 1.0472], dtype=float32)',
    ],
    'atan': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.atan(x).numpy().round(4)',
        'array([0.4636, 0.7854, 1.1071], dtype=float32)',
    ],
    'sinh': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.sinh(x).numpy().round(4)',
        'array([0.5211, 1.1752, 3.6269], dtype=float32)',
    ],
    'cosh': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.cosh(x).numpy().round(4)',
        'array([1.1276, 1.5431, 3.7622], dtype=float32)',
    ],
    'tanh': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.tanh(x).numpy().round(4)',
        'array([0.4621, 0.7616, 0.964 ], dtype=float32)',
    ],
    'asinh': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.asinh(x).numpy().round(4)',
        'array([0.4812, 0.8814, 1.4436], dtype=float32)',
    ],
    'acosh': [
        'x = pm.asarray([1.0, 2.0, 3.0])',
        'pm.acosh(x).numpy().round(4)',
        'array([0.    , 1.317 , 1.7627], dtype=float32)',
    ],
    'atanh': [
        'x = pm.asarray([-0.5, 0.0, 0.5])',
        'pm.atanh(x).numpy().round(4)',
        'array([-0.5493,  0.    ,  0.5493], dtype=float32)',
    ],
    'erf': [
        'x = pm.asarray([0.5, 1.0, 2.0])',
        'pm.erf(x).numpy().round(4)',
        'array([0.5205, 0.8427, 0.9953], dtype=float32)',
    ],
    'floor': [
        'x = pm.asarray([-1.5, 0.5, 2.7])',
        'pm.floor(x)',
        'Array([-2.,  0.,  2.], dtype=float32)',
    ],
    'ceil': [
        'x = pm.asarray([-1.5, 0.5, 2.7])',
        'pm.ceil(x)',
        'Array([-1.,  1.,  3.], dtype=float32)',
    ],
    'round': [
        'x = pm.asarray([-1.5, 0.5, 2.7])',
        'pm.round(x)',
        'Array([-2.,  0.,  3.], dtype=float32)',
    ],
    'trunc': [
        'x = pm.asarray([-1.5, 0.5, 2.7])',
        'pm.trunc(x)',
        'Array([-1.,  0.,  2.], dtype=float32)',
    ],
    'isnan': [
        'x = pm.asarray([1.0, np.nan, np.inf])',
        'pm.isnan(x)',
        'Array([False,  True, False], dtype=bool)',
    ],
    'isinf': [
        'x = pm.asarray([1.0, np.nan, np.inf])',
        'pm.isinf(x)',
        'Array([False, False,  True], dtype=bool)',
    ],
    'isfinite': [
        'x = pm.asarray([1.0, np.nan, np.inf])',
        'pm.isfinite(x)',
        'Array([ True, False, False], dtype=bool)',
    ],
    'signbit': [
        'x = pm.asarray([-1.0, -0.0, 2.0])',
        'pm.signbit(x)',
        'Array([ True,  True, False], dtype=bool)',
    ],
    'logical_not': [
        'x = pm.asarray([True, False])',
        'pm.logical_not(x)',
        'Array([False,  True], dtype=bool)',
    ],
    'bitwise_invert': [
        'x = pm.asarray([0, 1, 2], dtype=pm.uint8)',
        'pm.bitwise_invert(x)',
        'Array([255, 254, 253], dtype=uint8)',
    ],
    'conj': [
        'x = pm.asarray([1+2j, 3-1j])',
        'pm.conj(x)',
        'Array([1.-2.j, 3.+1.j], dtype=complex64)',
    ],
    'real': [
        'x = pm.asarray([1+2j, 3-1j])',
        'pm.real(x)',
        'Array([1., 3.], dtype=float32)',
    ],
    'imag': [
        'x = pm.asarray([1+2j, 3-1j])',
        'pm.imag(x)',
        'Array([ 2., -1.], dtype=float32)',
    ],
    'relu': [
        'x = pm.asarray([-1.5, 0.0, 2.0])',
        'pm.relu(x)',
        'Array([0., 0., 2.], dtype=float32)',
    ],
    'sigmoid': [
        'x = pm.asarray([-1.5, 0.0, 2.0])',
        'pm.sigmoid(x).numpy().round(4)',
        'array([0.1824, 0.5   , 0.8808], dtype=float32)',
    ],
    'softplus': [
        'x = pm.asarray([-1.5, 0.0, 2.0])',
        'pm.softplus(x).numpy().round(4)',
        'array([0.2014, 0.6931, 2.1269], dtype=float32)',
    ],
    'silu': [
        'x = pm.asarray([-1.5, 0.0, 2.0])',
        'pm.silu(x).numpy().round(4)',
        'array([-0.2736,  0.    ,  1.7616], dtype=float32)',
    ],
    'gelu': [
        'x = pm.asarray([-1.5, 0.0, 2.0])',
        'pm.gelu(x).numpy().round(4)',
        'array([-0.1002,  0.    ,  1.9545], dtype=float32)',
    ],
    'gelu_tanh': [
        'x = pm.asarray([-1.5, 0.0, 2.0])',
        'pm.gelu_tanh(x).numpy().round(4)',
        'array([-0.1004,  0.    ,  1.9546], dtype=float32)',
    ],
    'add': [
        'x1 = pm.asarray([1, 2, 3])',
        'pm.add(x1, 10)',
        'Array([11, 12, 13], dtype=int64)',
    ],
    'subtract': [
        'x1 = pm.asarray([1.5, 2.5])',
        'x2 = pm.asarray([1.0, 0.5])',
        'pm.subtract(x1, x2)',
        'Array([0.5, 2. ], dtype=float32)',
    ],
    'multiply': [
        'x1 = pm.asarray([1, 2, 3])',
        'x2 = pm.asarray([4, 5, 6])',
        'pm.multiply(x1, x2)',
        'Array([ 4, 10, 18], dtype=int64)',
    ],
    'divide': [
        'x1 = pm.asarray([1.0, 3.0])',
        'x2 = pm.asarray([4.0, 8.0])',
        'pm.divide(x1, x2)',
        'Array([0.25 , 0.375], dtype=float32)',
    ],
    'floor_divide': [
        'x1 = pm.asarray([-7, 7])',
        'pm.floor_divide(x1, 2)',
        'Array([-4,  3], dtype=int64)',
    ],
    'remainder': [
        'x1 = pm.asarray([-7, 7])',
        'pm.remainder(x1, 3)',
        'Array([2, 1], dtype=int64)',
    ],
    'pow': [
        'x1 = pm.asarray([1.0, 2.0, 3.0])',
        'pm.pow(x1, 2.0)',
        'Array([1., 4., 9.], dtype=float32)',
    ],
    'atan2': [
        'x1 = pm.asarray([1.0, -1.0])',
        'x2 = pm.asarray([1.0, 1.0])',
        'pm.atan2(x1, x2).numpy().round(4)',
        'array([ 0.7854, -0.7854], dtype=float32)',
    ],
    'hypot': [
        'x1 = pm.asarray([3.0, 5.0])',
        'x2 = pm.asarray([4.0, 12.0])',
        'pm.hypot(x1, x2).numpy().round(4)',
        'array([ 5., 13.], dtype=float32)',
    ],
    'copysign': [
        'x1 = pm.asarray([1.0, 2.0])',
        'x2 = pm.asarray([-1.0, 1.0])',
        'pm.copysign(x1, x2)',
        'Array([-1.,  2.], dtype=float32)',
    ],
    'nextafter': [
        'x1 = pm.asarray([1.0, 1.0])',
        'x2 = pm.asarray([2.0, 0.0])',
        'pm.nextafter(x1, x2)',
        'Array([1.0000001 , 0.99999994], dtype=float32)',
    ],
    'maximum': [
        'x1 = pm.asarray([1, 5, 3])',
        'x2 = pm.asarray([4, 2, 6])',
        'pm.maximum(x1, x2)',
        'Array([4, 5, 6], dtype=int64)',
    ],
    'minimum': [
        'x1 = pm.asarray([1, 5, 3])',
        'x2 = pm.asarray([4, 2, 6])',
        'pm.minimum(x1, x2)',
        'Array([1, 2, 3], dtype=int64)',
    ],
    'logaddexp': [
        'x1 = pm.asarray([0.0, 1.0])',
        'x2 = pm.asarray([0.0, 2.0])',
        'pm.logaddexp(x1, x2).numpy().round(4)',
        'array([0.6931, 2.3133], dtype=float32)',
    ],
    'equal': [
        'x1 = pm.asarray([1, 2, 3])',
        'pm.equal(x1, 2)',
        'Array([False,  True, False], dtype=bool)',
    ],
    'not_equal': [
        'x1 = pm.asarray([1, 2, 3])',
        'pm.not_equal(x1, 2)',
        'Array([ True, False,  True], dtype=bool)',
    ],
    'less': [
        'x1 = pm.asarray([1, 2, 3])',
        'pm.less(x1, 2)',
        'Array([ True, False, False], dtype=bool)',
    ],
    'less_equal': [
        'x1 = pm.asarray([1, 2, 3])',
        'pm.less_equal(x1, 2)',
        'Array([ True,  True, False], dtype=bool)',
    ],
    'greater': [
        'x1 = pm.asarray([1, 2, 3])',
        'pm.greater(x1, 2)',
        'Array([False, False,  True], dtype=bool)',
    ],
    'greater_equal': [
        'x1 = pm.asarray([1, 2, 3])',
        'pm.greater_equal(x1, 2)',
        'Array([False,  True,  True], dtype=bool)',
    ],
    'logical_and': [
        'x1 = pm.asarray([True, True, False])',
        'x2 = pm.asarray([True, False, False])',
        'pm.logical_and(x1, x2)',
        'Array([ True, False, False], dtype=bool)',
    ],
    'logical_or': [
        'x1 = pm.asarray([True, True, False])',
        'x2 = pm.asarray([True, False, False])',
        'pm.logical_or(x1, x2)',
        'Array([ True,  True, False], dtype=bool)',
    ],
    'logical_xor': [
        'x1 = pm.asarray([True, True, False])',
        'x2 = pm.asarray([True, False, False])',
        'pm.logical_xor(x1, x2)',
        'Array([False,  True, False], dtype=bool)',
    ],
    'bitwise_and': [
        'x1 = pm.asarray([12, 10])',
        'pm.bitwise_and(x1, 6)',
        'Array([4, 2], dtype=int64)',
    ],
    'bitwise_or': [
        'x1 = pm.asarray([12, 10])',
        'pm.bitwise_or(x1, 6)',
        'Array([14, 14], dtype=int64)',
    ],
    'bitwise_xor': [
        'x1 = pm.asarray([12, 10])',
        'pm.bitwise_xor(x1, 6)',
        'Array([10, 12], dtype=int64)',
    ],
    'bitwise_left_shift': [
        'x1 = pm.asarray([1, 2, 3])',
        'pm.bitwise_left_shift(x1, 2)',
        'Array([ 4,  8, 12], dtype=int64)',
    ],
    'bitwise_right_shift': [
        'x1 = pm.asarray([8, 17])',
        'pm.bitwise_right_shift(x1, 2)',
        'Array([2, 4], dtype=int64)',
    ],
    'leaky_relu': [
        'x1 = pm.asarray([-2.0, 3.0])',
        'pm.leaky_relu(x1, 0.1)',
        'Array([-0.2,  3. ], dtype=float32)',
    ],
}
