//! `pioscope export`: being built (placeholder so that parallel work compiles; replaced by its owner).
use anyhow::{bail, Result};
use clap::Parser;

/// Not built yet
#[derive(Parser, Debug)]
#[command(after_help = crate::EXIT_CODES)]
pub struct Args {}

pub fn run(_args: Args) -> Result<u8> {
    bail!("`pioscope export` is not built yet")
}
