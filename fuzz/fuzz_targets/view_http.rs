//! The viewer's HTTP queries: any request line the page (or anyone on loopback) could send,
//! answered by the real router over the tiny store. Errors must be 400 or 404, never a 500
//! (an internal error means a query the server did not expect) and never a crash.
#![no_main]

use std::sync::OnceLock;

use axum::http::StatusCode;
use axum::Router;
use libfuzzer_sys::fuzz_target;

fn app() -> &'static Router {
    static APP: OnceLock<Router> = OnceLock::new();
    APP.get_or_init(|| {
        // A copy: opening writes nothing into the base store itself.
        let dir = pioscope_fuzz::fresh_store();
        let state = pioscope_view::AppState::open(&[&dir], &mut |_| {}).expect("open the store");
        pioscope_view::app(state)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(uri) = std::str::from_utf8(data) else {
        return;
    };
    if let Some((status, _)) = pioscope_fuzz::get(app(), uri) {
        assert_ne!(status, StatusCode::INTERNAL_SERVER_ERROR, "{uri}");
    }
});
