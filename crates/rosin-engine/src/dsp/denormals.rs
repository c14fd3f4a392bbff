//! Subnormal numbers off for a stretch of audio work. A decaying high-Q mode or a ringing
//! string tail can sink into subnormal floats, which x86 processors handle up to a hundred
//! times slower than normal ones. [`DenormalGuard`] sets flush-to-zero (results that would be
//! subnormal become zero) and denormals-are-zero (subnormal inputs are read as zero) on the
//! current thread while it lives, and puts the thread's previous mode back when dropped, so a
//! host's own settings are left as they were.
//!
//! - x86 and x86-64 with SSE: MXCSR bits 15 (FTZ) and 6 (DAZ).
//! - AArch64: FPCR bit 24 (FZ), which flushes inputs and results alike.
//! - Elsewhere it does nothing; the output stage ([`super::output::to_host_sample`]) still
//!   keeps subnormals from the host.

use std::marker::PhantomData;

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
const MXCSR_FTZ_DAZ: u32 = (1 << 15) | (1 << 6);
#[cfg(target_arch = "aarch64")]
const FPCR_FZ: u64 = 1 << 24;

/// Flush-to-zero and denormals-are-zero on this thread while it lives.
pub struct DenormalGuard {
    /// The mode register as it was, to restore.
    #[allow(dead_code)]
    previous: u64,
    /// The mode belongs to this thread: the guard may not move to another.
    _not_send: PhantomData<*const ()>,
}

impl DenormalGuard {
    /// Sets flush-to-zero and denormals-are-zero on the current thread.
    #[inline]
    pub fn new() -> Self {
        Self { previous: set_flush_mode(), _not_send: PhantomData }
    }
}

impl Default for DenormalGuard {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for DenormalGuard {
    #[inline]
    fn drop(&mut self) {
        restore_flush_mode(self.previous);
    }
}

#[cfg(all(any(target_arch = "x86", target_arch = "x86_64"), target_feature = "sse"))]
fn set_flush_mode() -> u64 {
    let mut mxcsr: u32 = 0;
    // SAFETY: reading and writing MXCSR only changes this thread's floating-point mode; the
    // guard restores it.
    unsafe {
        std::arch::asm!("stmxcsr [{}]", in(reg) &mut mxcsr, options(nostack, preserves_flags));
        std::arch::asm!("ldmxcsr [{}]", in(reg) &(mxcsr | MXCSR_FTZ_DAZ), options(nostack, preserves_flags));
    }
    mxcsr as u64
}

#[cfg(all(any(target_arch = "x86", target_arch = "x86_64"), target_feature = "sse"))]
fn restore_flush_mode(previous: u64) {
    let mxcsr = previous as u32;
    // SAFETY: as above: the thread's mode as it was before the guard.
    unsafe { std::arch::asm!("ldmxcsr [{}]", in(reg) &mxcsr, options(nostack, preserves_flags)) };
}

#[cfg(target_arch = "aarch64")]
fn set_flush_mode() -> u64 {
    let fpcr: u64;
    // SAFETY: FPCR holds this thread's floating-point mode only; the guard restores it.
    unsafe {
        std::arch::asm!("mrs {}, fpcr", out(reg) fpcr, options(nomem, nostack, preserves_flags));
        std::arch::asm!("msr fpcr, {}", in(reg) fpcr | FPCR_FZ, options(nomem, nostack, preserves_flags));
    }
    fpcr
}

#[cfg(target_arch = "aarch64")]
fn restore_flush_mode(previous: u64) {
    // SAFETY: as above.
    unsafe { std::arch::asm!("msr fpcr, {}", in(reg) previous, options(nomem, nostack, preserves_flags)) };
}

#[cfg(not(any(all(any(target_arch = "x86", target_arch = "x86_64"), target_feature = "sse"), target_arch = "aarch64")))]
fn set_flush_mode() -> u64 {
    0
}

#[cfg(not(any(all(any(target_arch = "x86", target_arch = "x86_64"), target_feature = "sse"), target_arch = "aarch64")))]
fn restore_flush_mode(_previous: u64) {}

#[cfg(all(test, any(all(any(target_arch = "x86", target_arch = "x86_64"), target_feature = "sse"), target_arch = "aarch64")))]
mod tests {
    use super::*;
    use std::hint::black_box;

    #[test]
    fn subnormals_are_zero_inside_the_guard_and_back_after_it() {
        let tiny = black_box(1e-300f64);
        let subnormal = black_box(f64::from_bits(1));
        let tiny32 = black_box(1e-30f32);
        // Outside: ordinary IEEE arithmetic.
        assert!(black_box(tiny * 1e-10) > 0.0, "no subnormal results outside the guard");
        assert!(black_box(subnormal * 2.0) > 0.0);
        {
            let _guard = DenormalGuard::new();
            // A result below the smallest normal number is flushed to zero (FTZ)...
            assert_eq!(black_box(tiny * 1e-10), 0.0);
            assert_eq!(black_box(tiny32 * 1e-10), 0.0);
            // ...and a subnormal input is read as zero (DAZ; on AArch64, FZ covers both).
            assert_eq!(black_box(subnormal * 2.0), 0.0);
            // Normal numbers are untouched.
            assert_eq!(black_box(1.5f64 * 2.0), 3.0);
        }
        assert!(black_box(tiny * 1e-10) > 0.0, "the thread's mode was not restored");
        assert!(black_box(subnormal * 2.0) > 0.0);
    }
}
