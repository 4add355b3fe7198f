//! How a run uses the machine: threads, the memory limit, the temp
//! directory, the pass strategy and how many sample rows to show.

use std::path::PathBuf;

use crate::error::hint::switch;
use crate::error::{ReconError, Result};
use crate::size::{parse_size, GIB, KIB, MIB};

/// How many times the inputs are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
pub enum Passes {
    /// Two passes unless a side is text (CSV, NDJSON).
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// Read once and spill every row's record.
    #[serde(rename = "1")]
    One,
    /// Fingerprint buckets first; read again spilling only differing buckets.
    #[serde(rename = "2")]
    Two,
}

/// The smallest `--memory-limit`: below it the fixed structures (one
/// staging chunk per bucket and thread, the fingerprint arrays) do not fit.
pub(super) const MIN_MEMORY_LIMIT: u64 = 8 * MIB;

/// Run settings as flags and files spell them.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Worker threads; all cores when absent.
    pub threads: Option<usize>,
    /// `256MiB`, `4GiB`, `unlimited`; half of RAM when absent.
    pub memory_limit: Option<String>,
    /// Where spill files and the copy of a piped input go (`--temp-dir`);
    /// the system temp directory when absent.
    pub temp_dir: Option<PathBuf>,
    /// How many times the inputs are read (`--passes`); `auto` when absent.
    pub passes: Option<Passes>,
    /// Distinct unmatched rows shown per direction.
    pub sample: Option<usize>,
}

/// Validated run settings.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// Worker threads, at least 1 (`--threads`).
    pub threads: usize,
    /// Bytes; `u64::MAX` is unlimited.
    pub memory_limit: u64,
    /// Where spill files and the copy of a piped input go (`--temp-dir`);
    /// None: the system temp directory.
    pub temp_dir: Option<PathBuf>,
    /// How many times the inputs are read (`--passes`).
    pub passes: Passes,
    /// Distinct unmatched rows shown per direction (`--sample`).
    pub sample: usize,
}

impl Default for RunSettings {
    /// Every core, half of RAM, the system temp directory, the pass strategy
    /// chosen per format and 20 sample rows: what the CLI runs without flags.
    fn default() -> Self {
        RunSettings {
            threads: default_threads(),
            memory_limit: default_limit(),
            temp_dir: None,
            passes: Passes::Auto,
            sample: 20,
        }
    }
}

/// Worker threads when none are asked for: every core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Physical memory from /proc/meminfo, if readable.
pub(super) fn total_ram() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * KIB)
}

/// The default memory limit: half of physical RAM (2 GiB if unknown).
pub fn default_limit() -> u64 {
    total_ram().map_or(2 * GIB, |r| r / 2)
}

impl RunSettings {
    /// Checks settings that a library caller may have set directly.
    pub fn validate(&self) -> Result<()> {
        if self.threads == 0 {
            return Err(ReconError::Usage(format!(
                "{} must be at least 1",
                switch("threads")
            )));
        }
        if self.memory_limit < MIN_MEMORY_LIMIT {
            return Err(ReconError::Usage(format!(
                "{} must be at least 8MiB",
                switch("memory_limit")
            )));
        }
        Ok(())
    }
}

impl RunConfig {
    /// `self`, with `fallback`'s value where `self` gives none.
    pub fn or(&self, fallback: &RunConfig) -> RunConfig {
        RunConfig {
            threads: self.threads.or(fallback.threads),
            memory_limit: self.memory_limit.clone().or(fallback.memory_limit.clone()),
            temp_dir: self.temp_dir.clone().or(fallback.temp_dir.clone()),
            passes: self.passes.or(fallback.passes),
            sample: self.sample.or(fallback.sample),
        }
    }

    /// Fills in defaults (`default_threads`, `default_limit`) and checks every value.
    pub fn build(&self, default_threads: usize, default_limit: u64) -> Result<RunSettings> {
        let memory_limit = match &self.memory_limit {
            Some(m) => parse_size(m)
                .map_err(|e| ReconError::Usage(format!("{}: {e}", switch("memory_limit"))))?,
            None => default_limit,
        };
        let passes = self.passes.unwrap_or_default();
        let settings = RunSettings {
            threads: self.threads.unwrap_or(default_threads),
            memory_limit,
            temp_dir: self.temp_dir.clone(),
            passes,
            sample: self.sample.unwrap_or(20),
        };
        settings.validate()?;
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(c: RunConfig) -> std::result::Result<RunSettings, String> {
        c.build(4, 1 << 30).map_err(|e| e.to_string())
    }

    #[test]
    fn a_file_spells_passes_as_the_flag_does() {
        let c: RunConfig = toml::from_str("passes = \"1\"\nthreads = 2").unwrap();
        assert_eq!((c.passes, c.threads), (Some(Passes::One), Some(2)));
        assert!(toml::from_str::<RunConfig>("passes = \"3\"").is_err());
        assert!(toml::from_str::<RunConfig>("thread = 2").is_err());
    }

    #[test]
    fn defaults_fill_in() {
        let s = build(RunConfig::default()).unwrap();
        assert_eq!((s.threads, s.memory_limit, s.sample), (4, 1 << 30, 20));
        assert_eq!(s.passes, Passes::Auto);
    }

    #[test]
    fn every_rule_that_was_only_in_the_cli_holds_here() {
        for (c, why) in [
            (
                RunConfig {
                    threads: Some(0),
                    ..Default::default()
                },
                "--threads must be at least 1",
            ),
            (
                RunConfig {
                    memory_limit: Some("4MiB".into()),
                    ..Default::default()
                },
                "at least 8MiB",
            ),
            (
                RunConfig {
                    memory_limit: Some("12 parsecs".into()),
                    ..Default::default()
                },
                "invalid size unit",
            ),
        ] {
            let err = build(c).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
        let ok = build(RunConfig {
            memory_limit: Some("8MiB".into()),
            passes: Some(Passes::One),
            ..Default::default()
        })
        .unwrap();
        assert_eq!((ok.memory_limit, ok.passes), (8 * MIB, Passes::One));
        let unlimited = build(RunConfig {
            memory_limit: Some("unlimited".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(unlimited.memory_limit, u64::MAX);
    }
}
