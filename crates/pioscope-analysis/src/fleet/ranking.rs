//! The fleet ranked as the summary page shows it: the fleet's totals, the jobs with the most
//! I/O time, every finding rule with its jobs and cost summed over the fleet, and the first
//! failed inputs. The ranking is SQL (`ranking.sql`, the text docs/FORMAT.md gives for Spark)
//! run by DuckDB over the written tables, in a Python process (`ranking.py`, run by the
//! interpreter the fleet already uses for Darshan logs): DuckDB's memory is capped and spills
//! to disk, so the ranking is bounded whatever the number of jobs. This file owns the process
//! and the typed results.
//!
//! Design note: DuckDB comes as Python's prebuilt wheel rather than as a Rust crate, whose
//! bundled C++ build would cost CI many minutes; `pioscope fleet` needs Python anyway for
//! PyDarshan.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

/// The ranking's queries, one per `-- name: NAME` line.
pub const RANKING_SQL: &str = include_str!("ranking.sql");

/// The script that runs them with DuckDB and prints their results as JSON.
const RUNNER: &str = include_str!("ranking.py");

/// DuckDB's memory cap: what does not fit spills to the temporary directory.
pub const MEMORY_LIMIT: &str = "256MB";

/// The fleet's totals.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct Totals {
    /// Inputs (rows of jobs.parquet).
    pub inputs: u64,
    /// Inputs that failed.
    pub failed: u64,
    /// Findings (rows of findings.parquet).
    pub findings: u64,
    /// Bytes read over the fleet.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// I/O time, ns summed over every rank of every job.
    pub io_ns: i64,
    /// Wall time, ns summed likewise.
    pub wall_ns: i64,
}

/// A profiled job among those with the most I/O time (jobs.parquet's columns of that name).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct RankedJob {
    /// The input's path.
    pub input: String,
    /// `trace` or `darshan`.
    pub kind: String,
    /// Its short name.
    pub job: String,
    /// MPI ranks.
    pub ranks: u32,
    /// Job duration, ns.
    pub duration_ns: i64,
    /// Time in I/O, ns summed over ranks.
    pub io_ns: i64,
    /// `io_ns / wall_ns`.
    pub io_share: f64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Whether the findings were judged.
    pub findings_judged: bool,
    /// The costliest finding's rule id.
    pub top_finding: Option<String>,
    /// Its cost, ns.
    pub top_finding_cost_ns: Option<i64>,
}

/// One finding rule over the fleet.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct RuleTotals {
    /// Rule id.
    pub finding: String,
    /// Jobs with at least one finding of the rule.
    pub jobs: u64,
    /// Findings of the rule.
    pub findings: u64,
    /// Findings of high severity.
    pub high: u64,
    /// Of medium severity.
    pub medium: u64,
    /// Of low severity.
    pub low: u64,
    /// Their cost summed over the fleet, ns.
    pub cost_ns: i64,
    /// The costliest one's cost, ns.
    pub worst_cost_ns: i64,
    /// The job it was found in (input).
    pub worst_input: String,
    /// Its title.
    pub worst_title: String,
}

/// An input that failed.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct FailedInput {
    /// The input's path.
    pub input: String,
    /// `trace`, `darshan` or `unknown`.
    pub kind: String,
    /// Why it failed.
    pub error: String,
}

/// The fleet ranked, as the queries give it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ranking {
    /// The fleet's totals.
    pub totals: Totals,
    /// The jobs with the most I/O time, most first (ties by input), at most 100.
    pub jobs: Vec<RankedJob>,
    /// Every rule found, costliest over the fleet first (ties by id).
    pub rules: Vec<RuleTotals>,
    /// The first failed inputs by input, at most 100.
    pub errors: Vec<FailedInput>,
}

/// The runner's answer: the queries' rows by name, or the module it lacks.
#[derive(Deserialize)]
#[serde(untagged)]
enum Answer {
    Missing {
        missing_module: String,
    },
    Results {
        // One row: a sequence of one.
        totals: (Totals,),
        jobs: Vec<RankedJob>,
        rules: Vec<RuleTotals>,
        errors: Vec<FailedInput>,
    },
}

/// Why the fleet could not be ranked.
#[derive(Debug, thiserror::Error)]
pub enum RankingError {
    /// The interpreter could not be started.
    #[error("cannot run the Python interpreter {python} (--python, $PIOSCOPE_PYTHON): {source}")]
    Start {
        /// The interpreter.
        python: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The interpreter has no DuckDB.
    #[error(
        "the Python interpreter {python} has no {module} module, which ranks the fleet: \
         install it (`{python} -m pip install {module}`) or name another interpreter with \
         --python or $PIOSCOPE_PYTHON"
    )]
    MissingModule {
        /// The interpreter.
        python: String,
        /// The module (duckdb).
        module: String,
    },
    /// DuckDB or the script failed.
    #[error("ranking {} with DuckDB failed ({status}): {message}", dir.display())]
    Failed {
        /// The fleet directory.
        dir: PathBuf,
        /// The process's exit status.
        status: String,
        /// Its last line on stderr.
        message: String,
    },
    /// The script's answer did not parse.
    #[error("the ranking's DuckDB script answered unexpectedly: {0}")]
    Answer(#[from] serde_json::Error),
}

/// Ranks the fleet whose tables are `jobs` and `findings` (files of the directory `dir`), with
/// DuckDB in the Python interpreter `python`, spilling to `temp_dir` beyond [`MEMORY_LIMIT`].
pub fn rank(
    python: &str,
    dir: &Path,
    jobs: &Path,
    findings: &Path,
    temp_dir: &Path,
) -> Result<Ranking, RankingError> {
    let output = Command::new(python)
        .arg("-c")
        .arg(RUNNER)
        .arg(RANKING_SQL)
        .args([jobs, findings, temp_dir])
        .arg(MEMORY_LIMIT)
        .output()
        .map_err(|source| RankingError::Start {
            python: python.to_string(),
            source,
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
        return Err(RankingError::Failed {
            dir: dir.to_path_buf(),
            status: output.status.to_string(),
            message: last.unwrap_or("no output").to_string(),
        });
    }
    match serde_json::from_slice(&output.stdout)? {
        Answer::Missing { missing_module } => Err(RankingError::MissingModule {
            python: python.to_string(),
            module: missing_module,
        }),
        Answer::Results {
            totals: (totals,),
            jobs,
            rules,
            errors,
        } => Ok(Ranking {
            totals,
            jobs,
            rules,
            errors,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::table::{findings, jobs};

    #[test]
    fn the_queries_read_the_tables_by_their_column_names() {
        // The results are parsed by the fields above; the columns they come from are the
        // tables' constants, so a rename in table.rs must show here.
        for column in [
            jobs::INPUT,
            jobs::KIND,
            jobs::JOB,
            jobs::ERROR,
            jobs::RANKS,
            jobs::DURATION_NS,
            jobs::WALL_NS,
            jobs::IO_NS,
            jobs::IO_SHARE,
            jobs::BYTES_READ,
            jobs::BYTES_WRITTEN,
            jobs::FINDINGS_JUDGED,
            jobs::TOP_FINDING,
            jobs::TOP_FINDING_COST_NS,
            findings::INPUT,
            findings::POSITION,
            findings::FINDING,
            findings::SEVERITY,
            findings::TITLE,
            findings::COST_NS,
        ] {
            assert!(RANKING_SQL.contains(column), "{column}");
        }
        let names: Vec<&str> = RANKING_SQL
            .lines()
            .filter_map(|l| l.strip_prefix("-- name: "))
            .collect();
        assert_eq!(names, ["totals", "jobs", "rules", "errors"]);
    }

    #[test]
    fn a_missing_interpreter_is_named() {
        let dir = Path::new("/nonexistent");
        let e = rank("/nonexistent/python3", dir, dir, dir, dir).expect_err("no interpreter");
        assert!(e.to_string().contains("/nonexistent/python3"), "{e}");
    }
}
