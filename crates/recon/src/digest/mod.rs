//! Digests: the canonical encoding of values and rows and its 128-bit row
//! digests ([`encode`], specified with test vectors in docs/encoding.md),
//! order-independent digests of multisets of them ([`multiset`]), and
//! invertible sketches that name the digests two multisets differ in ([`iblt`]).

pub mod encode;
pub mod iblt;
pub mod multiset;
mod peel;
pub mod sketch;

pub(crate) use encode::check_supported;
pub use encode::{
    combine, encode_row, null_digest, reference_digest, value_digest, Combiner, RowEncoder,
    ENCODING_VERSION,
};
pub use multiset::{
    bucket_difference, fp_bucket_of, mix, BucketDifferences, DigestBuildHasher, DigestHasher,
    Fingerprint, RunSketch, FP_BITS, FP_BUCKETS,
};
pub use sketch::UnitFilter;

/// A digest whose count differs between the sides: (digest, source − target).
pub type Difference = (u128, i64);
