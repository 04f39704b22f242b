use super::{emit_state, CreatePoolArgs};
use crate::{error::PoolError, state::*};
use kit::{
    accounts::{self as acc, AccountData, KitError},
    cpi,
    pod::*,
    time, AccountView, Address, ProgramResult,
};

/// Checks one text field: `len` within the field's size (else `too_long`) and, when `ascii` is
/// false, valid UTF-8 (all-ASCII input skips the full check).
#[inline(always)]
fn text(bytes: &[u8], len: usize, too_long: PoolError, ascii: bool) -> ProgramResult {
    if len > bytes.len() {
        return Err(too_long.into());
    }
    if !ascii && !utf8(bytes, len) {
        return Err(PoolError::InvalidText.into());
    }
    Ok(())
}

#[inline(never)]
fn utf8(bytes: &[u8], len: usize) -> bool {
    core::str::from_utf8(&bytes[..len]).is_ok()
}

/// OR of every 8-byte word of a fixed-size field (one load per word: the SBF VM allows
/// unaligned loads, which `read_unaligned` would split into 8 byte loads).
#[inline(always)]
fn or_words<const N: usize>(bytes: &[u8; N]) -> u64 {
    let (mut acc, mut i) = (0u64, 0);
    while i + 8 <= N {
        acc |= unsafe { core::ptr::read_volatile(bytes.as_ptr().add(i) as *const u64) };
        i += 8;
    }
    acc
}

extern "C" {
    fn sol_memcpy_(dst: *mut u8, src: *const u8, n: u64);
}

/// Copies a fixed-size text field with the memcpy syscall (alignment-1 arrays otherwise copy
/// byte by byte).
#[inline(always)]
fn copy<const N: usize>(dst: &mut [u8; N], src: &[u8; N]) {
    unsafe { sol_memcpy_(dst.as_mut_ptr(), src.as_ptr(), N as u64) }
}

pub fn process(program_id: &Address, accounts: &[AccountView], args: &CreatePoolArgs) -> ProgramResult {
    let [payer, creator, config, pool, system_program, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(payer)?;
    acc::signer(creator)?;
    acc::program(system_program, &cpi::SYSTEM_PROGRAM_ID)?;
    let cfg = super::config(config, program_id)?;

    let count = args.outcome_count as usize;
    if !(2..=MAX_OUTCOMES).contains(&count) {
        return Err(PoolError::InvalidOutcomeCount.into());
    }
    let qlen = args.question_len.get() as usize;
    if qlen == 0 {
        return Err(PoolError::QuestionEmpty.into());
    }
    // Every text field is a multiple of 8 bytes; one pass tells whether any byte is non-ASCII.
    let ascii = (or_words(&args.question) | or_words(&args.criteria) | or_words(&args.cover_url) | or_words(&args.labels)) & 0x8080_8080_8080_8080 == 0;
    text(&args.question, qlen, PoolError::QuestionTooLong, ascii)?;
    text(&args.criteria, args.criteria_len.get() as usize, PoolError::CriteriaTooLong, ascii)?;
    text(&args.cover_url, args.cover_url_len as usize, PoolError::CoverUrlTooLong, ascii)?;
    // Two outcomes with both labels empty take the defaults; otherwise every label is required.
    let defaults = count == 2 && args.label_lens[0] == 0 && args.label_lens[1] == 0;
    let mut i = 0;
    while i < MAX_OUTCOMES {
        let len = args.label_lens[i] as usize;
        if i >= count {
            if len != 0 {
                return Err(PoolError::InvalidOutcomeCount.into());
            }
        } else if !defaults {
            if len == 0 {
                return Err(PoolError::LabelEmpty.into());
            }
            text(&args.labels[i * MAX_LABEL..(i + 1) * MAX_LABEL], len, PoolError::LabelTooLong, ascii)?;
        }
        i += 1;
    }
    let now = time::now();
    let (closes_at, resolution_at) = (args.closes_at.get(), args.resolution_at.get());
    if closes_at <= now {
        return Err(PoolError::ClosesAtInPast.into());
    }
    // Upper bounds so that no creator can lock stakes for ever (i64::MAX times): see SECURITY.md.
    if closes_at > now.saturating_add(MAX_OPEN_SECONDS) {
        return Err(PoolError::ClosesAtTooFar.into());
    }
    if resolution_at != 0 && resolution_at < closes_at {
        return Err(PoolError::InvalidResolutionTime.into());
    }
    if resolution_at > closes_at.saturating_add(MAX_RESOLUTION_DELAY_SECONDS) {
        return Err(PoolError::ResolutionTooLate.into());
    }
    // The one pool of (creator, nonce): canonical bump, not existing yet, pre-funding tolerated.
    cpi::create_canonical(payer, pool, Pool::SIZE, program_id, &[b"pool", creator.address().as_ref(), args.nonce.0.as_ref()], args.bump)?;
    let p = acc::init::<Pool>(pool)?;
    p.creator = *creator.address();
    p.nonce = args.nonce;
    p.bump = args.bump;
    p.version = if count == 2 { VERSION_TWO_OUTCOME } else { VERSION_MULTI_OUTCOME };
    p.state = POOL_OPEN;
    p.outcome_count = args.outcome_count;
    p.fee_bps = cfg.fee_bps;
    p.question_len = args.question_len;
    // Whole fixed-size fields (constant-size copies); readers use the lengths, and the client
    // zero-fills the bytes after them.
    copy(&mut p.question, &args.question);
    p.criteria_len = args.criteria_len;
    copy(&mut p.criteria, &args.criteria);
    p.cover_url_len = args.cover_url_len;
    copy(&mut p.cover_url, &args.cover_url);
    p.closes_at = args.closes_at;
    p.resolution_at = args.resolution_at;
    let mut i = 0;
    while i < count {
        let o = &mut p.outcomes[i];
        if defaults {
            let label: &[u8] = if i == 0 { b"For" } else { b"Against" };
            o.label_len = label.len() as u8;
            o.label[..label.len()].copy_from_slice(label);
        } else {
            o.label_len = args.label_lens[i];
            // SAFETY: i < 8, so bytes i*24 .. i*24+24 lie inside the 192-byte labels field.
            let src = unsafe { &*(args.labels.as_ptr().add(i * MAX_LABEL) as *const [u8; 24]) };
            copy(&mut o.label, src);
        }
        i += 1;
    }
    p.proposed_outcome = NO_OUTCOME;
    p.winning_outcome = NO_OUTCOME;
    p.created_at = PodI64::new(now);
    p.updated_at = PodI64::new(now);
    emit_state(pool.address(), POOL_OPEN, NO_OUTCOME, now);
    Ok(())
}
