//! The machine model (docs/MODEL.md) and the discrete-event simulator behind `pioscope
//! simulate`, `calibrate`, `compare` and `bounds`.
