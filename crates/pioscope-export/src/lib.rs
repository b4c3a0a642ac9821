//! Exports of a trace store to the formats of existing viewers: Pajé (ViTE, pajeng), Chrome
//! trace JSON (Perfetto), OTF2 (Vampir) and CSV.
