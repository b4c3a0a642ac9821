//! Which simulated call stands for which observed call, one rank at a time.
//!
//! A replay keeps each rank's order of calls, so the k-th top-level `MPI_File_write_all` of a
//! rank in the observed trace is the k-th in the simulated one; beneath a matched pair, the
//! k-th child of each function matches the k-th (the model may issue more or fewer exchanges
//! and writes than ROMIO did: the extra ones stay unmatched).
//!
//! The simulator knows which observed event each replayed call stands for
//! (`pioscope_sim::program::Call::observed_id`), but its store has no column for it yet; once
//! it has, pairing by that id goes here.

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::ops::{children, Op, NONE};

/// How the calls were paired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// Order of occurrence per (rank, function), children per matched parent.
    Order,
}

/// The pairing of one rank.
#[derive(Debug, Default)]
pub(crate) struct Matching {
    /// `sim_of[i]`: index of observed call i's counterpart in the simulated list, or `NONE`.
    pub sim_of: Vec<u32>,
    /// `matched_sim[j]`: whether simulated call j has an observed counterpart.
    pub matched_sim: Vec<bool>,
}

/// Pairs the calls of one rank.
pub(crate) fn match_rank(obs: &[Op], sim: &[Op]) -> Matching {
    let mut m = Matching {
        sim_of: vec![NONE; obs.len()],
        matched_sim: vec![false; sim.len()],
    };
    let mut groups: FxHashMap<u32, (Vec<u32>, usize)> = FxHashMap::default();
    let tops = |ops: &[Op]| {
        ops.iter()
            .enumerate()
            .filter(|(_, o)| o.is_top())
            .map(|(i, o)| (i, o.func()))
            .collect::<Vec<_>>()
    };
    let mut pairs = Vec::new();
    zip_by_func(&mut groups, tops(sim), tops(obs), |i, j| pairs.push((i, j)));
    for &(i, j) in &pairs {
        m.sim_of[i] = j as u32;
        m.matched_sim[j] = true;
    }
    // Children beneath each matched top-level pair, by order per function.
    for (i, j) in pairs {
        let oc: Vec<(usize, u32)> = children(obs, i).map(|c| (c, obs[c].func())).collect();
        let sc: Vec<(usize, u32)> = children(sim, j).map(|c| (c, sim[c].func())).collect();
        zip_by_func(&mut groups, sc, oc, |a, b| {
            m.sim_of[a] = b as u32;
            m.matched_sim[b] = true;
        });
    }
    m
}

/// Pairs the k-th observed item of each function with the k-th simulated one:
/// `pair(observed index, simulated index)`.
fn zip_by_func(
    groups: &mut FxHashMap<u32, (Vec<u32>, usize)>,
    sim: Vec<(usize, u32)>,
    obs: Vec<(usize, u32)>,
    mut pair: impl FnMut(usize, usize),
) {
    for g in groups.values_mut() {
        g.0.clear();
        g.1 = 0;
    }
    for (j, f) in sim {
        groups.entry(f).or_default().0.push(j as u32);
    }
    for (i, f) in obs {
        if let Some(g) = groups.get_mut(&f) {
            if let Some(&j) = g.0.get(g.1) {
                g.1 += 1;
                pair(i, j as usize);
            }
        }
    }
}
