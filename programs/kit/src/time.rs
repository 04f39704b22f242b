//! The cluster clock, read through the syscall (no sysvar account needed).

extern "C" {
    fn sol_get_clock_sysvar(out: *mut u8) -> u64;
}

/// Unix timestamp of the current slot.
#[inline(always)]
pub fn now() -> i64 {
    // Clock: slot u64, epoch_start_timestamp i64, epoch u64, leader_schedule_epoch u64, unix_timestamp i64.
    let mut clock = [0u8; 40];
    unsafe { sol_get_clock_sysvar(clock.as_mut_ptr()) };
    i64::from_le_bytes([clock[32], clock[33], clock[34], clock[35], clock[36], clock[37], clock[38], clock[39]])
}
