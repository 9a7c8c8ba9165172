//! The C prelude of every compiled kernel: the CPU's float functions and Threefry, as C.
//!
//! Each function is a line-for-line port of its twin in [`crate::cpu::interp::math`] or
//! [`crate::cpu::interp::threefry`]: the same IEEE operations in the same order, every constant
//! taken from the Rust definition (printed as its shortest round-tripping decimal, which a
//! C compiler parses back to the same bits), compiled with contraction into FMA off; `floor`,
//! exact in both, is the C library's. So a compiled kernel returns the interpreter's bits,
//! which `cpu::tests::engines` checks on every op over awkward values at every level, and
//! the CPU plan tests on CartPole under every plan, level and thread count.

use std::fmt::Write;

use crate::cpu::interp::math;
use crate::rng::{KEY_PARITY, ROTATIONS, ROUNDS, symmetric_uniform_scale};

/// The C body of the prelude: helpers over `float` and `uint32_t`, all `static inline`.
const BODY: &str = r#"
typedef union { float f; uint32_t u; } cf_pun;
CF_INLINE uint32_t cf_bits(float x) { cf_pun p; p.f = x; return p.u; }
CF_INLINE float cf_float(uint32_t x) { cf_pun p; p.u = x; return p.f; }
CF_INLINE float cf_min_raw(float a, float b) { return a < b ? a : b; }
CF_INLINE float cf_max_raw(float a, float b) { return a > b ? a : b; }
CF_INLINE float cf_min(float a, float b) { return b != b ? a : cf_min_raw(a, b); }
CF_INLINE float cf_max(float a, float b) { return b != b ? a : cf_max_raw(a, b); }
CF_INLINE float cf_abs(float a) { return cf_float(cf_bits(a) & 0x7fffffffu); }
CF_INLINE float cf_neg(float a) { return cf_float(cf_bits(a) ^ 0x80000000u); }
/* x86's cvttps2dq: out of range and NaN give 0x80000000. */
CF_INLINE uint32_t cf_trunc_i32(float a) {
    return (a >= -2147483648.0f && a < 2147483648.0f) ? (uint32_t)(int32_t)a : 0x80000000u;
}
CF_INLINE float cf_i32_to_f32(uint32_t a) { return (float)(int32_t)a; }
/* Rust's saturating `f32 as u32`. */
CF_INLINE uint32_t cf_f32_to_u32(float a) {
    return a > 0.0f ? (a >= 4294967296.0f ? 0xffffffffu : (uint32_t)a) : 0u;
}
/* The indices of the set flags (bytes 0 or 1) among flags[0, len), in order; returns
   their count. Eight flags are tested at a time, each set one found by its trailing zeros. */
CF_INLINE int64_t cf_compact(const uint8_t *flags, int64_t len, int32_t *taken) {
    int64_t count = 0, w = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; w + 8 <= len; w += 8) {
        uint64_t m;
        __builtin_memcpy(&m, flags + w, 8);
        while (m) {
            taken[count++] = (int32_t)(w + (__builtin_ctzll(m) >> 3));
            m &= m - 1u;
        }
    }
#endif
    for (; w < len; w++) {
        taken[count] = (int32_t)w;
        count += flags[w];
    }
    return count;
}
CF_INLINE float cf_round(float x) {
    float ax = cf_abs(x);
    float rounded = (ax + CF_ROUND_MAGIC) - CF_ROUND_MAGIC;
    float sign_kept = cf_float(cf_bits(rounded) | (cf_bits(x) & 0x80000000u));
    return ax < CF_ROUND_MAGIC ? sign_kept : x;
}
/* `math::floor` is exact (IEEE floor, signed zeros kept), so the C library's floor gives
   its bits; written as `math::floor` is, the selects kept gcc from vectorising the loop. */
CF_INLINE float cf_floor(float x) { return __builtin_floorf(x); }
CF_INLINE float cf_pow2i(uint32_t k) { return cf_float((k + 127u) << 23); }
CF_INLINE void cf_sin_cos(float x, float *sin_out, float *cos_out) {
    float ax = cf_abs(x);
    uint32_t j = cf_trunc_i32(ax * CF_FOPI);
    j = (j + 1u) & ~1u;
    float y = cf_i32_to_f32(j);
    float r = ax - y * CF_DP1;
    r = r - y * CF_DP2;
    r = r - y * CF_DP3;
    float z = r * r;
    float ps = (cf_horner_SIN_P(z) * z) * r + r;
    float pc = (cf_horner_COS_P(z) * z) * z;
    pc = (pc - 0.5f * z) + 1.0f;
    uint32_t sin_sign = (cf_bits(x) & 0x80000000u) ^ ((j & 4u) << 29);
    *sin_out = cf_float(cf_bits((j & 2u) == 0u ? ps : pc) ^ sin_sign);
    uint32_t jc = j - 2u;
    uint32_t cos_sign = ((jc ^ 0xffffffffu) & 4u) << 29;
    *cos_out = cf_float(cf_bits((jc & 2u) == 0u ? ps : pc) ^ cos_sign);
}
CF_INLINE float cf_sin(float x) { float s, c; cf_sin_cos(x, &s, &c); return s; }
CF_INLINE float cf_cos(float x) { float s, c; cf_sin_cos(x, &s, &c); return c; }
CF_INLINE float cf_exp(float x) {
    float xc = cf_min_raw(cf_max_raw(x, -104.0f), 89.0f);
    float n = cf_round(xc * CF_LOG2E);
    float r = xc - n * CF_LN2_HI;
    r = r - n * CF_LN2_LO;
    float p = (cf_horner_EXP_P(r) * r) * r;
    p = (p + r) + 1.0f;
    uint32_t k = cf_trunc_i32(n);
    uint32_t k1 = cf_trunc_i32(n * 0.5f);
    uint32_t k2 = k - k1;
    float y = (p * cf_pow2i(k1)) * cf_pow2i(k2);
    return x != x ? x : y;
}
CF_INLINE float cf_log(float x) {
    int tiny = x < CF_MIN_POSITIVE;
    float xs = tiny ? x * 8388608.0f : x;
    uint32_t bits = cf_bits(xs);
    float e = cf_i32_to_f32((bits >> 23) - 126u);
    e = e - (tiny ? 23.0f : 0.0f);
    float m = cf_float((bits & 0x007fffffu) | 0x3f000000u);
    int below = m < CF_SQRT_HALF;
    e = e - (below ? 1.0f : 0.0f);
    float xm = (m + (below ? m : 0.0f)) - 1.0f;
    float z = xm * xm;
    float y = (cf_horner_LOG_P(xm) * xm) * z;
    y = y + e * CF_LN2_LO;
    y = y - 0.5f * z;
    float r = (xm + y) + e * CF_LN2_HI;
    r = x == CF_INFINITY ? x : r;
    r = x < 0.0f ? CF_NAN : r;
    r = x == 0.0f ? -CF_INFINITY : r;
    return x != x ? x : r;
}
CF_INLINE float cf_tanh(float x) {
    float ax = cf_abs(x);
    float z = x * x;
    float small = (cf_horner_TANH_P(z) * z) * x + x;
    float e = cf_exp(ax + ax);
    float large = 1.0f - 2.0f / (e + 1.0f);
    large = cf_float(cf_bits(large) | (cf_bits(x) & 0x80000000u));
    return ax < 0.625f ? small : large;
}
CF_INLINE float cf_erf(float x) {
    float ax = cf_abs(x);
    float z = x * x;
    float small = x * cf_horner_ERF_T(z);
    float a = cf_max_raw(cf_min_raw(ax, 10.0f), 1.0f);
    float ez = cf_exp(cf_neg(a * a));
    float q = 1.0f / a;
    float qq = q * q;
    float p = a < 2.0f ? cf_horner_ERFC_P(qq) : cf_horner_ERFC_R(qq);
    float large = 1.0f - (ez * q) * p;
    large = cf_float(cf_bits(large) | (cf_bits(x) & 0x80000000u));
    float r = ax < 1.0f ? small : large;
    return x != x ? x : r;
}
CF_INLINE float cf_pow(float x, float y) {
    float r = cf_exp(y * cf_log(cf_abs(x)));
    float ay = cf_abs(y);
    int huge = 8388608.0f <= ay;
    int integer = huge | (cf_round(y) == y);
    int odd = (ay < 16777216.0f) & ((cf_trunc_i32(y) & 1u) == 1u);
    int negative = (cf_bits(x) >> 31) == 1u;
    r = (negative & integer & odd) ? cf_neg(r) : r;
    r = ((x < 0.0f) & !integer) ? CF_NAN : r;
    return ((y == 0.0f) | (x == 1.0f)) ? 1.0f : r;
}
CF_INLINE float cf_uniform(uint32_t bits) {
    return cf_i32_to_f32((bits >> 8) - (1u << 23)) * CF_UNIFORM_SCALE;
}
"#;

/// A C `float` literal with exactly `v`'s bits (shortest round-tripping decimal).
pub(super) fn float_literal(v: f32) -> String {
    match v {
        _ if v.is_nan() => "CF_NAN".into(),
        f32::INFINITY => "CF_INFINITY".into(),
        f32::NEG_INFINITY => "(-CF_INFINITY)".into(),
        _ => format!("{v:e}f"),
    }
}

/// Threefry-2x32 as in [`crate::rng::threefry2x32`], its rounds unrolled.
fn threefry() -> String {
    let mut c = String::from(
        "CF_INLINE void cf_threefry(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, \
         uint32_t *w0, uint32_t *w1) {\n\
         const uint32_t ks0 = k0, ks1 = k1, ks2 = k0 ^ k1 ^ CF_KEY_PARITY;\n\
         uint32_t x0 = c0 + ks0;\n\
         uint32_t x1 = c1 + ks1;\n",
    );
    for round in 0..ROUNDS {
        let (r, l) = (ROTATIONS[round % 8], 32 - ROTATIONS[round % 8]);
        let _ = writeln!(
            c,
            "x0 = x0 + x1; x1 = (x1 << {r}u) | (x1 >> {l}u); x1 = x1 ^ x0;"
        );
        if round % 4 == 3 {
            let i = round / 4 + 1;
            let (k0, k1) = (i % 3, (i + 1) % 3);
            let _ = writeln!(c, "x0 = x0 + ks{k0}; x1 = (x1 + ks{k1}) + {i}u;");
        }
    }
    c.push_str("*w0 = x0;\n*w1 = x1;\n}\n");
    c
}

/// The whole prelude: includes, constants from the Rust definitions, the unrolled
/// polynomials and Threefry, then [`BODY`].
pub(super) fn prelude() -> String {
    let mut c = String::from("#include <stdint.h>\n#include <stddef.h>\n");
    c.push_str("#define CF_INLINE static inline __attribute__((always_inline))\n");
    c.push_str("#define CF_NAN __builtin_nanf(\"\")\n#define CF_INFINITY __builtin_inff()\n");
    // `math`'s constants under their Rust names, as `(name, value)`.
    macro_rules! named {
        ($($name:ident),*) => { [$((stringify!($name), &math::$name)),*] };
    }
    let scalars = (named![ROUND_MAGIC, FOPI, DP1, DP2, DP3].into_iter())
        .chain(named![LOG2E, LN2_HI, LN2_LO, SQRT_HALF])
        .map(|(name, value)| (name, *value))
        .chain([("MIN_POSITIVE", f32::MIN_POSITIVE)])
        .chain([("UNIFORM_SCALE", symmetric_uniform_scale(1.0))]);
    for (name, value) in scalars {
        let _ = writeln!(c, "#define CF_{name} {}", float_literal(value));
    }
    let _ = writeln!(c, "#define CF_KEY_PARITY 0x{KEY_PARITY:08x}u");
    let arrays: [(&str, &[f32]); 8] =
        named![SIN_P, COS_P, EXP_P, LOG_P, TANH_P, ERF_T, ERFC_P, ERFC_R];
    // Horner's rule and Threefry's rounds unrolled in the source: a loop inside the lane
    // loop stops the vectoriser ("loop nest containing two or more consecutive inner
    // loops"), and the compiler does not always unroll them itself.
    for (name, values) in arrays {
        let _ = writeln!(c, "CF_INLINE float cf_horner_{name}(float x) {{");
        let _ = writeln!(c, "    float acc = {};", float_literal(values[0]));
        for v in &values[1..] {
            let _ = writeln!(c, "    acc = acc * x + {};", float_literal(*v));
        }
        c.push_str("    return acc;\n}\n");
    }
    c.push_str(&threefry());
    c.push_str(BODY);
    c
}
