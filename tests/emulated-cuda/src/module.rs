//! Modules loaded from PTX text, their kernels and globals.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::{Arc, Mutex};

use ptx_emulator::{EntryId, Module};

use crate::abi::*;
use crate::driver::{api, current, driver, put};

pub struct LoadedModule {
    pub ctx: usize,
    pub module: Arc<Module>,
    /// Function handles already handed out, by kernel name (the same name gives the
    /// same handle, so looking a kernel up per launch costs nothing).
    functions: Mutex<HashMap<String, usize>>,
}

pub struct Function {
    pub ctx: usize,
    pub module: Arc<Module>,
    pub entry: EntryId,
    pub name: String,
}

/// The sm version a `.target` names ("sm_80", "sm_90a" -> 80, 90).
fn target_sm(target: &str) -> Option<u32> {
    target.strip_prefix("sm_")?.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse().ok()
}

/// Loads PTX text into the current context: INVALID_PTX (with the interpreter's reason
/// on stderr) if it refuses the module or the module targets a newer device.
fn load(ptx: &[u8]) -> Result<CUmodule, CUresult> {
    let ctx = current()?;
    let d = driver()?;
    if ptx.starts_with(b"\x7fELF") || ptx.starts_with(&0xba55_ed50u32.to_le_bytes()) {
        eprintln!("ccoll-emu: cuModuleLoadData: cubin/fatbin images are not supported, only PTX text");
        return Err(CUDA_ERROR_INVALID_IMAGE);
    }
    let text = std::str::from_utf8(ptx).map_err(|_| {
        eprintln!("ccoll-emu: cuModuleLoadData: the image is not UTF-8 PTX text");
        CUDA_ERROR_INVALID_PTX
    })?;
    let module = Module::load(text, &mut d.mem.lock().unwrap()).map_err(|e| {
        eprintln!("ccoll-emu: cuModuleLoadData: {e}");
        CUDA_ERROR_INVALID_PTX
    })?;
    match target_sm(module.target()) {
        Some(sm) if sm <= d.cc => {}
        _ => {
            eprintln!("ccoll-emu: cuModuleLoadData: PTX .target {} cannot run on the emulated sm_{} device (CCOLL_EMU_CC)", module.target(), d.cc);
            module.unload(&mut d.mem.lock().unwrap());
            return Err(CUDA_ERROR_INVALID_PTX);
        }
    }
    let loaded = LoadedModule { ctx: ctx.handle, module: Arc::new(module), functions: Mutex::new(HashMap::new()) };
    Ok(d.modules.insert(Arc::new(loaded)))
}

/// Drops the module's handles and frees its globals once no queued work uses it.
fn unload(loaded: Arc<LoadedModule>) -> Result<(), CUresult> {
    let d = driver()?;
    for (_, h) in loaded.functions.lock().unwrap().drain() {
        d.functions.remove(h as CUfunction);
    }
    if let Ok(loaded) = Arc::try_unwrap(loaded) {
        if let Ok(module) = Arc::try_unwrap(loaded.module) {
            module.unload(&mut d.mem.lock().unwrap());
        }
    }
    Ok(())
}

/// Unloads every module of a context being destroyed (its work has finished).
pub fn unload_all(ctx: usize) {
    if let Ok(d) = driver() {
        for m in d.modules.remove_where(|m| m.ctx == ctx) {
            let _ = unload(m);
        }
    }
}

/// The NUL-terminated string at `p`.
unsafe fn c_str<'a>(p: *const c_char) -> Result<&'a CStr, CUresult> {
    if p.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(CStr::from_ptr(p))
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadData(pmod: *mut CUmodule, image: *const c_void) -> CUresult {
    api(|| {
        if pmod.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let text = c_str(image.cast())?;
        put(pmod, load(text.to_bytes())?)
    })
}

/// JIT options (log buffers, optimisation level) have no effect on the interpreter.
#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    pmod: *mut CUmodule,
    image: *const c_void,
    _num_options: c_uint,
    _options: *mut c_int,
    _values: *mut *mut c_void,
) -> CUresult {
    cuModuleLoadData(pmod, image)
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleLoad(pmod: *mut CUmodule, fname: *const c_char) -> CUresult {
    api(|| {
        if pmod.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let path = c_str(fname)?.to_str().map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
        let bytes = std::fs::read(path).map_err(|e| {
            eprintln!("ccoll-emu: cuModuleLoad: {path}: {e}");
            CUDA_ERROR_FILE_NOT_FOUND
        })?;
        put(pmod, load(&bytes)?)
    })
}

/// The module's own context need not be current (cust unloads wherever it drops).
#[no_mangle]
pub unsafe extern "C" fn cuModuleUnload(hmod: CUmodule) -> CUresult {
    api(|| {
        let d = driver()?;
        let loaded = d.modules.get(hmod).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let ctx = d.contexts.get(loaded.ctx as CUcontext).ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        // Queued launches hold the module; let them finish before its globals go.
        ctx.synchronize()?;
        d.modules.remove(hmod);
        unload(loaded)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleGetFunction(pf: *mut CUfunction, hmod: CUmodule, name: *const c_char) -> CUresult {
    api(|| {
        current()?;
        let d = driver()?;
        let loaded = d.modules.get(hmod).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let name = c_str(name)?.to_str().map_err(|_| CUDA_ERROR_NOT_FOUND)?;
        let mut functions = loaded.functions.lock().unwrap();
        if let Some(&h) = functions.get(name) {
            return put(pf, h as CUfunction);
        }
        let entry = loaded.module.entry(name).ok_or(CUDA_ERROR_NOT_FOUND)?;
        let f = Function { ctx: loaded.ctx, module: Arc::clone(&loaded.module), entry, name: name.to_owned() };
        let h = d.functions.insert(Arc::new(f));
        functions.insert(name.to_owned(), h as usize);
        put(pf, h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleGetGlobal_v2(dptr: *mut CUdeviceptr, bytes: *mut usize, hmod: CUmodule, name: *const c_char) -> CUresult {
    api(|| {
        current()?;
        let loaded = driver()?.modules.get(hmod).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let name = c_str(name)?.to_str().map_err(|_| CUDA_ERROR_NOT_FOUND)?;
        let (addr, size) = loaded.module.global(name).ok_or(CUDA_ERROR_NOT_FOUND)?;
        if !dptr.is_null() {
            *dptr = addr;
        }
        if !bytes.is_null() {
            *bytes = size;
        }
        Ok(())
    })
}
