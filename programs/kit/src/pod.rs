//! Little-endian integers with alignment 1, for zero-copy account layouts.

macro_rules! pod_int {
    ($name:ident, $t:ty, $n:literal) => {
        #[repr(transparent)]
        #[derive(Clone, Copy, Default, PartialEq, Eq)]
        pub struct $name(pub [u8; $n]);

        impl $name {
            #[inline(always)]
            pub const fn new(v: $t) -> Self {
                Self(v.to_le_bytes())
            }
            #[inline(always)]
            pub const fn get(&self) -> $t {
                <$t>::from_le_bytes(self.0)
            }
            #[inline(always)]
            pub fn set(&mut self, v: $t) {
                self.0 = v.to_le_bytes();
            }
        }
    };
}

pod_int!(PodU16, u16, 2);
pod_int!(PodU32, u32, 4);
pod_int!(PodU64, u64, 8);
pod_int!(PodI64, i64, 8);

/// A type whose bytes can be viewed in place: `#[repr(C)]`, alignment 1, no padding, every bit
/// pattern valid.
///
/// # Safety
/// Implementors must uphold exactly that.
pub unsafe trait Pod: Sized {
    const LEN: usize = core::mem::size_of::<Self>();

    #[inline(always)]
    fn from_bytes(bytes: &[u8]) -> Option<&Self> {
        if bytes.len() < Self::LEN {
            return None;
        }
        // SAFETY: length checked, alignment 1, every bit pattern valid.
        Some(unsafe { &*(bytes.as_ptr() as *const Self) })
    }
}

unsafe impl Pod for PodU16 {}
unsafe impl Pod for PodU32 {}
unsafe impl Pod for PodU64 {}
unsafe impl Pod for PodI64 {}

/// The bytes of a [`Pod`] value (its Borsh encoding, by construction).
#[inline(always)]
pub fn bytes_of<T: Pod>(value: &T) -> &[u8] {
    // SAFETY: Pod types have no padding.
    unsafe { core::slice::from_raw_parts(value as *const T as *const u8, T::LEN) }
}
