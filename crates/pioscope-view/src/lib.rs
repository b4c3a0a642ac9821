//! The timeline viewer behind `pioscope view`: answers window queries from the level-of-detail
//! index and serves the browser page.
