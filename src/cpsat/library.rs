//! Finding and loading OR-tools' shared library, and calling its CP-SAT C API
//! (`ortools/sat/c_api/cp_solver_c.h`): serialised `CpModelProto` and `SatParameters` in, a
//! serialised `CpSolverResponse` out.
//!
//! Where the library comes from, first match wins:
//! 1. `TELAMALLOC_ORTOOLS_LIB`: the library file, or a folder holding it;
//! 2. the `ortools` package of the active `python3` (`pip install ortools`): `libortools.so*` in
//!    the package folder, its `.libs` folder, or a sibling `*.libs` folder.
//!
//! It is loaded once per process and never unloaded.

use libloading::Library;
use std::ffi::{c_int, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// The environment variable naming the library file (or its folder).
pub const ENV_VAR: &str = "TELAMALLOC_ORTOOLS_LIB";

/// How to get the library, appended to every "not available" message.
pub(crate) const HOW_TO_GET: &str =
    "install it with `pip install ortools` (for the active python3), \
     or set TELAMALLOC_ORTOOLS_LIB to the path of libortools.so";

/// How often the watcher thread checks whether to stop the solve.
const WATCH_INTERVAL: Duration = Duration::from_millis(5);

type SolveFn = unsafe extern "C" fn(
    model: *const c_void,
    model_len: c_int,
    params: *const c_void,
    params_len: c_int,
    response: *mut *mut c_void,
    response_len: *mut c_int,
);
type InterruptibleFn = unsafe extern "C" fn(
    handle: *mut c_void,
    model: *const c_void,
    model_len: c_int,
    params: *const c_void,
    params_len: c_int,
    response: *mut *mut c_void,
    response_len: *mut c_int,
);
type NewHandleFn = unsafe extern "C" fn() -> *mut c_void;
type HandleFn = unsafe extern "C" fn(handle: *mut c_void);

unsafe extern "C" {
    /// The C library's `free`: the response buffer is `malloc`'d by the C API.
    fn free(ptr: *mut c_void);
}

/// The entry points of a solve another thread can stop: a handle made by `new`, passed to
/// `solve`, stopped by `stop`, released by `destroy`.
struct Interruptible {
    new: NewHandleFn,
    stop: HandleFn,
    destroy: HandleFn,
    solve: InterruptibleFn,
}

/// The loaded library and its CP-SAT entry points.
pub struct CpSatLibrary {
    path: PathBuf,
    solve: SolveFn,
    interruptible: Option<Interruptible>,
    // Last, so the function pointers above never outlive it (it is never dropped in practice).
    _library: Library,
}

impl std::fmt::Debug for CpSatLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpSatLibrary")
            .field("path", &self.path)
            .field("interruptible", &self.interruptible.is_some())
            .finish()
    }
}

/// A handle that crosses to the watcher thread (the C API's stop call is thread-safe).
struct Handle(*mut c_void);
// SAFETY: the handle is only passed to the C API, whose stop function is meant to be called
// from another thread while the solve runs.
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

impl Handle {
    /// The raw handle (a method, so closures capture the whole `Handle`, not its field).
    fn ptr(&self) -> *mut c_void {
        self.0
    }
}

impl CpSatLibrary {
    /// Loads the library at `path` and looks up its CP-SAT functions.
    pub fn load(path: &Path) -> Result<CpSatLibrary, String> {
        // SAFETY: loading runs the library's initialisers; libortools is a plain C++ library
        // whose initialisers only set up its own globals.
        let library = unsafe { Library::new(path) }
            .map_err(|e| format!("cannot load {}: {e}; {HOW_TO_GET}", path.display()))?;
        // SAFETY: the types are those of cp_solver_c.h.
        unsafe {
            let solve: SolveFn = *library
                .get::<SolveFn>(b"SolveCpModelWithParameters\0")
                .map_err(|e| {
                    format!(
                        "{} has no CP-SAT C API (SolveCpModelWithParameters): {e}; {HOW_TO_GET}",
                        path.display()
                    )
                })?;
            // Newer releases (9.12 on) name the handle an environment; older ones an atomic bool.
            let names: [[&[u8]; 3]; 2] = [
                [
                    b"SolveCpNewEnv\0",
                    b"SolveCpStopSearch\0",
                    b"SolveCpDestroyEnv\0",
                ],
                [
                    b"SolveCpNewAtomicBool\0",
                    b"SolveCpStopSolve\0",
                    b"SolveCpDestroyAtomicBool\0",
                ],
            ];
            let interruptible = names.iter().find_map(|[new, stop, destroy]| {
                Some(Interruptible {
                    new: *library.get::<NewHandleFn>(*new).ok()?,
                    stop: *library.get::<HandleFn>(*stop).ok()?,
                    destroy: *library.get::<HandleFn>(*destroy).ok()?,
                    solve: *library
                        .get::<InterruptibleFn>(b"SolveCpInterruptible\0")
                        .ok()?,
                })
            });
            Ok(CpSatLibrary {
                path: path.to_path_buf(),
                solve,
                interruptible,
                _library: library,
            })
        }
    }

    /// The file it was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a running solve can be stopped from another thread.
    pub fn is_interruptible(&self) -> bool {
        self.interruptible.is_some()
    }

    /// Solves an encoded model under encoded parameters and returns the encoded response.
    /// `should_stop` is polled every few milliseconds from a watcher thread while CP-SAT runs
    /// (when the library can be interrupted); once it returns true the solve is stopped, and
    /// CP-SAT answers with what it has (`UNKNOWN` when it has nothing).
    pub fn solve(
        &self,
        model: &[u8],
        params: &[u8],
        should_stop: &(dyn Fn() -> bool + Sync),
    ) -> Vec<u8> {
        let model_len = c_int::try_from(model.len()).expect("a model under 2 GiB");
        let params_len = c_int::try_from(params.len()).expect("parameters under 2 GiB");
        let mut response: *mut c_void = std::ptr::null_mut();
        let mut response_len: c_int = 0;
        match &self.interruptible {
            None => {
                // SAFETY: pointers and lengths describe live buffers; the out-pointers are valid.
                unsafe {
                    (self.solve)(
                        model.as_ptr().cast(),
                        model_len,
                        params.as_ptr().cast(),
                        params_len,
                        &mut response,
                        &mut response_len,
                    )
                }
            }
            Some(api) => {
                // SAFETY: `new` takes no arguments and returns a fresh handle.
                let handle = Handle(unsafe { (api.new)() });
                let done = AtomicBool::new(false);
                std::thread::scope(|scope| {
                    scope.spawn(|| {
                        while !done.load(Ordering::Acquire) {
                            if should_stop() {
                                // SAFETY: the handle lives until after this thread is joined.
                                unsafe { (api.stop)(handle.ptr()) };
                                break;
                            }
                            std::thread::sleep(WATCH_INTERVAL);
                        }
                    });
                    // SAFETY: as above; the handle is valid for the whole call.
                    unsafe {
                        (api.solve)(
                            handle.ptr(),
                            model.as_ptr().cast(),
                            model_len,
                            params.as_ptr().cast(),
                            params_len,
                            &mut response,
                            &mut response_len,
                        )
                    };
                    done.store(true, Ordering::Release);
                });
                // SAFETY: the watcher has been joined; nobody uses the handle any more.
                unsafe { (api.destroy)(handle.ptr()) };
            }
        }
        let len = usize::try_from(response_len).unwrap_or(0);
        if response.is_null() {
            return Vec::new();
        }
        // SAFETY: the C API returns a malloc'd buffer of `response_len` bytes, ours to free.
        unsafe {
            let bytes = std::slice::from_raw_parts(response.cast::<u8>(), len).to_vec();
            free(response);
            bytes
        }
    }
}

/// The process's CP-SAT library, found and loaded on first use (`locate`, then
/// [`CpSatLibrary::load`]); the error says what was tried and how to get it.
pub fn shared() -> Result<&'static CpSatLibrary, String> {
    static LIBRARY: OnceLock<Result<CpSatLibrary, String>> = OnceLock::new();
    LIBRARY
        .get_or_init(|| locate().and_then(|path| CpSatLibrary::load(&path)))
        .as_ref()
        .map_err(Clone::clone)
}

/// Where the library is: `TELAMALLOC_ORTOOLS_LIB` if set, else the active `python3`'s
/// `ortools` package.
pub(crate) fn locate() -> Result<PathBuf, String> {
    if let Some(explicit) = std::env::var_os(ENV_VAR).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(explicit);
        if path.is_dir() {
            return search_folder(&path).ok_or_else(|| {
                format!(
                    "{ENV_VAR}={}: no libortools.so* in that folder; {HOW_TO_GET}",
                    path.display()
                )
            });
        }
        if path.is_file() {
            return Ok(path);
        }
        return Err(format!(
            "{ENV_VAR}={}: no such file; {HOW_TO_GET}",
            path.display()
        ));
    }
    let package =
        python_package().map_err(|why| format!("{ENV_VAR} is not set and {why}; {HOW_TO_GET}"))?;
    search_folder(&package).ok_or_else(|| {
        format!(
            "{ENV_VAR} is not set and python3's ortools package ({}) holds no libortools.so*; {HOW_TO_GET}",
            package.display()
        )
    })
}

/// The folder of the active `python3`'s `ortools` package.
fn python_package() -> Result<PathBuf, String> {
    let output = Command::new("python3")
        .args([
            "-c",
            "import ortools, os; print(os.path.dirname(ortools.__file__))",
        ])
        .output()
        .map_err(|e| format!("python3 cannot be run ({e})"))?;
    if !output.status.success() {
        return Err("the active python3 has no ortools package".into());
    }
    let text = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if text.is_empty() {
        return Err("python3 did not say where ortools is".into());
    }
    Ok(PathBuf::from(text))
}

/// The OR-tools library in `folder`, its `.libs` subfolder or a sibling `*.libs` folder (where
/// wheel repair tools put bundled libraries).
fn search_folder(folder: &Path) -> Option<PathBuf> {
    let mut places = vec![folder.to_path_buf(), folder.join(".libs")];
    if let Some(parent) = folder.parent() {
        let mut siblings: Vec<PathBuf> = std::fs::read_dir(parent)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir() && p.to_string_lossy().ends_with(".libs"))
            .collect();
        siblings.sort();
        places.extend(siblings);
    }
    places.iter().find_map(|place| {
        let mut found: Vec<PathBuf> = std::fs::read_dir(place)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.is_file()
                    && p.file_name()
                        .is_some_and(|n| is_library_name(&n.to_string_lossy()))
            })
            .collect();
        found.sort();
        found.into_iter().next()
    })
}

/// `libortools.so`, `libortools.so.9`, `libortools.so.9.15`, `libortools.dylib`,
/// `libortools.9.dylib`, and wheel-repaired names such as `libortools-1a2b3c.so.9`.
pub fn is_library_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("libortools") else {
        return false;
    };
    let rest = match rest.strip_prefix('-') {
        Some(hashed) => &hashed[hashed.find('.').unwrap_or(hashed.len())..],
        None => rest,
    };
    let numbers = |s: &str| {
        s.split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    };
    if let Some(version) = rest.strip_prefix(".so") {
        return version.is_empty() || version.strip_prefix('.').is_some_and(numbers);
    }
    if let Some(version) = rest.strip_suffix(".dylib") {
        return version.is_empty() || version.strip_prefix('.').is_some_and(numbers);
    }
    false
}
