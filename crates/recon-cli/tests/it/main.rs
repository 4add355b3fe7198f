//! The command-line tests, one test binary: each file here was a binary of
//! its own, and each linked the whole engine (14 links per CI run).

mod common;
mod junit_schema;

mod batch;
mod cli;
mod exactness;
mod extracts;
mod fingerprint;
mod iceberg;
mod inputs;
mod keyed;
mod lakehouse;
mod msrv;
mod oracle;
mod outputs;
mod runs;
mod schema;
mod stress;
