//! Logging without `core::fmt` (the linker cannot place the pointer tables it needs).

extern "C" {
    fn sol_log_(message: *const u8, len: u64);
    fn sol_log_64_(a: u64, b: u64, c: u64, d: u64, e: u64);
    fn sol_log_data(data: *const u8, len: u64);
}

#[inline(always)]
pub fn msg(text: &str) {
    // SAFETY: pointer and length come from a valid &str.
    unsafe { sol_log_(text.as_ptr(), text.len() as u64) }
}

/// Logs up to five numbers on one line ("Program log: 0x.., 0x.., ...").
#[inline(always)]
pub fn msg_u64(a: u64, b: u64, c: u64, d: u64, e: u64) {
    unsafe { sol_log_64_(a, b, c, d, e) }
}

/// Largest event body [`emit`] carries.
pub const MAX_EVENT_BODY: usize = 248;

/// Emits an Anchor-style event: one `Program data: base64(discriminator ++ borsh(body))` entry
/// (Anchor's event parser reads a single base64 field, so the two parts are joined first).
#[inline(always)]
pub fn emit(discriminator: &[u8; 8], body: &[u8]) {
    let len = if body.len() < MAX_EVENT_BODY { body.len() } else { MAX_EVENT_BODY };
    let mut buf = [0u8; 8 + MAX_EVENT_BODY];
    buf[..8].copy_from_slice(discriminator);
    buf[8..8 + len].copy_from_slice(&body[..len]);
    let parts: [&[u8]; 1] = [&buf[..8 + len]];
    // SAFETY: a slice of slices is laid out as (ptr, len) pairs, the SolBytes ABI.
    unsafe { sol_log_data(parts.as_ptr() as *const u8, 1) }
}
