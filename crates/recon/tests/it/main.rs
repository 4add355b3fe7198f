//! The library's integration tests, one test binary (one link of the engine
//! instead of one per file).

mod encoding_props;
mod function_length;
mod layers;
mod sources;
