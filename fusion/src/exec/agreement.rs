//! How closely a backend's float results follow the native CPU runtime's (issue 51: the same
//! episodes on every device).

/// How a backend's float results compare with the native CPU runtime's, the reference every
/// replay and every plan is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatAgreement {
    /// The CPU's bits for every op and float function: single-precision `+ - * /` and `sqrt`
    /// correctly rounded, none fused with another into one rounding or rewritten by inexact
    /// algebra, subnormal numbers kept, and `sin`, `cos`, `exp`, `log`, `tanh`, `erf` and
    /// `pow` computed by the CPU's own algorithms ([`crate::cpu::interp::math`]). The CPU
    /// runtime (both engines), Mesa's lavapipe (the runtime suites check it in CI) and CUDA
    /// (NVRTC with `--fmad=false`, `vendor/README.md`). One exception on lavapipe: a product
    /// with a zero written as a constant in the graph is `+0.0` whatever its sign should be
    /// (Mesa folds it so without SPIR-V's `SignedZeroInfNanPreserve`, which naga never
    /// declares); a zero computed at run time keeps its sign.
    Bitwise,
    /// Each op within [`FloatAgreement::BOUNDED_RELATIVE`] of the CPU's result (absolute
    /// below 1): Vulkan lets a driver divide and take square roots within 2.5 ulp and flush
    /// subnormal numbers to zero (its precision table), so other Vulkan drivers are held to
    /// a bound. A trajectory's differences then grow with its steps, as chaos allows.
    Bounded,
}

impl FloatAgreement {
    /// The largest difference per op a [`FloatAgreement::Bounded`] backend may show against the
    /// CPU's result: relative above 1 in magnitude, absolute below (a few ulp of Vulkan's
    /// division carried through one of the CPU's float functions).
    pub const BOUNDED_RELATIVE: f64 = 1e-5;

    /// Whether results must equal the CPU's bit for bit.
    pub fn is_bitwise(self) -> bool {
        self == FloatAgreement::Bitwise
    }
}
