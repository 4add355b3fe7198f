//! Digests: the canonical encoding of values and rows and its 128-bit row
//! digests ([`encode`], specified with test vectors in docs/encoding.md),
//! and order-independent digests of multisets of them ([`multiset`]).

pub mod encode;
pub mod multiset;
pub mod sketch;

pub(crate) use encode::check_supported;
pub use encode::{
    combine, encode_row, null_digest, reference_digest, value_digest, Combiner, RowEncoder,
    ENCODING_VERSION,
};
pub use multiset::{
    fp_bucket_of, mix, single_difference, DigestBuildHasher, DigestHasher, Fingerprint, FP_BITS,
    FP_BUCKETS,
};
pub use sketch::UnitFilter;

/// A digest whose count differs between the sides: (digest, source − target).
pub type Difference = (u128, i64);
