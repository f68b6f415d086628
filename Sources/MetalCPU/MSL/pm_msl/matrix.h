// MSL matrices (metal_matrix): matrix<T, Cols, Rows>, floatNxM and halfNxM
// (N columns of M rows, column-major, each column a vec<T, M>: float4x3 has
// float3 columns of 16 bytes, as in MSL). Constructors from a scalar (the
// diagonal), from Cols columns, from Cols * Rows scalars (column by column) and
// from another element type; m[i] is column i; +, -, * with scalars,
// matrix * vector, vector * matrix, matrix * matrix; transpose, determinant.
#pragma once
#include "types.h"

namespace metal {
template <class _PmT, int _PmC, int _PmR> struct matrix {
    static_assert(_PmC >= 2 && _PmC <= 4 && _PmR >= 2 && _PmR <= 4, "matrices have 2 to 4 columns and rows");
    typedef vec<_PmT, _PmR> column_type;
    column_type columns[_PmC];

    matrix() = default;
    // The diagonal (other elements 0).
    constexpr explicit matrix(_PmT d) : columns{} {
        for (int i = 0; i < (_PmC < _PmR ? _PmC : _PmR); i++) columns[i][i] = d;
    }
    template <class... _PmA>
        requires(sizeof...(_PmA) == _PmC && ((pm_is_vec<_PmA> && pm_width<_PmA> == _PmR) && ...))
    constexpr matrix(_PmA... cols) : columns{__builtin_convertvector(cols, column_type)...} {}
    template <class... _PmA>
        requires(sizeof...(_PmA) == _PmC * _PmR && (pm_is_arith<_PmA> && ...))
    constexpr matrix(_PmA... values) : columns{} {
        _PmT v[] = {(_PmT)values...};
        for (int c = 0; c < _PmC; c++)
            for (int r = 0; r < _PmR; r++) columns[c][r] = v[c * _PmR + r];
    }
    template <class _PmU>
    constexpr explicit matrix(const matrix<_PmU, _PmC, _PmR> &m) : columns{} {
        for (int c = 0; c < _PmC; c++) columns[c] = __builtin_convertvector(m.columns[c], column_type);
    }

    constexpr column_type &operator[](int c) { return columns[c]; }
    constexpr const column_type &operator[](int c) const { return columns[c]; }

#define PM_MATRIX_OP(op)                                                              \
    friend constexpr matrix operator op(matrix a, const matrix &b) {                  \
        for (int c = 0; c < _PmC; c++) a.columns[c] = a.columns[c] op b.columns[c];   \
        return a;                                                                     \
    }                                                                                 \
    constexpr matrix &operator op##=(const matrix &b) { return *this = *this op b; }
    PM_MATRIX_OP(+)
    PM_MATRIX_OP(-)
#undef PM_MATRIX_OP
    friend constexpr matrix operator-(matrix a) {
        for (int c = 0; c < _PmC; c++) a.columns[c] = -a.columns[c];
        return a;
    }
    friend constexpr matrix operator*(matrix a, _PmT s) {
        for (int c = 0; c < _PmC; c++) a.columns[c] = a.columns[c] * s;
        return a;
    }
    friend constexpr matrix operator*(_PmT s, const matrix &a) { return a * s; }
    constexpr matrix &operator*=(_PmT s) { return *this = *this * s; }
    // matrix * column vector: a combination of the columns.
    friend constexpr column_type operator*(const matrix &m, vec<_PmT, _PmC> v) {
        column_type r = m.columns[0] * v[0];
        for (int c = 1; c < _PmC; c++) r += m.columns[c] * v[c];
        return r;
    }
    // row vector * matrix: one dot product per column.
    friend constexpr vec<_PmT, _PmC> operator*(column_type v, const matrix &m) {
        vec<_PmT, _PmC> r = 0;
        for (int c = 0; c < _PmC; c++) {
            column_type p = v * m.columns[c];
            _PmT s = p[0];
            for (int i = 1; i < _PmR; i++) s += p[i];
            r[c] = s;
        }
        return r;
    }
    template <int _PmK> friend constexpr matrix<_PmT, _PmK, _PmR> operator*(const matrix &a, const matrix<_PmT, _PmK, _PmC> &b) {
        matrix<_PmT, _PmK, _PmR> r;
        for (int k = 0; k < _PmK; k++) r.columns[k] = a * b.columns[k];
        return r;
    }
    constexpr matrix &operator*=(const matrix<_PmT, _PmC, _PmC> &b) { return *this = *this * b; }
};

template <class _PmT, int _PmC, int _PmR> constexpr matrix<_PmT, _PmR, _PmC> transpose(const matrix<_PmT, _PmC, _PmR> &m) {
    matrix<_PmT, _PmR, _PmC> t;
    for (int c = 0; c < _PmC; c++)
        for (int r = 0; r < _PmR; r++) t.columns[r][c] = m.columns[c][r];
    return t;
}

// Cofactor expansion along the first column (exact for 2x2 and 3x3 up to rounding).
template <class _PmT> constexpr _PmT determinant(const matrix<_PmT, 2, 2> &m) {
    return m[0][0] * m[1][1] - m[1][0] * m[0][1];
}
template <class _PmT> constexpr _PmT determinant(const matrix<_PmT, 3, 3> &m) {
    return m[0][0] * (m[1][1] * m[2][2] - m[2][1] * m[1][2]) - m[1][0] * (m[0][1] * m[2][2] - m[2][1] * m[0][2]) +
           m[2][0] * (m[0][1] * m[1][2] - m[1][1] * m[0][2]);
}
template <class _PmT> constexpr _PmT determinant(const matrix<_PmT, 4, 4> &m) {
    _PmT d = 0;
    for (int c = 0; c < 4; c++) {
        matrix<_PmT, 3, 3> minor;
        for (int k = 0, j = 0; k < 4; k++) {
            if (k == c) continue;
            for (int r = 1; r < 4; r++) minor.columns[j][r - 1] = m.columns[k][r];
            j++;
        }
        _PmT term = m.columns[c][0] * determinant(minor);
        d += (c % 2 == 0) ? term : -term;
    }
    return d;
}

#define PM_MATRICES(_PmT)                                                                          \
    typedef matrix<_PmT, 2, 2> _PmT##2x2; typedef matrix<_PmT, 2, 3> _PmT##2x3; typedef matrix<_PmT, 2, 4> _PmT##2x4; \
    typedef matrix<_PmT, 3, 2> _PmT##3x2; typedef matrix<_PmT, 3, 3> _PmT##3x3; typedef matrix<_PmT, 3, 4> _PmT##3x4; \
    typedef matrix<_PmT, 4, 2> _PmT##4x2; typedef matrix<_PmT, 4, 3> _PmT##4x3; typedef matrix<_PmT, 4, 4> _PmT##4x4;
PM_MATRICES(float)
PM_MATRICES(half)
#undef PM_MATRICES
} // namespace metal
