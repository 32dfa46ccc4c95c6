//! A loaded module: its functions, entry points and module-scope globals.

use crate::{Fault, LaunchStats, LoadError, Memory};

/// An `.entry` of a loaded module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryId(pub(crate) usize);

/// One `.param` of an `.entry`: its byte offset in the packed parameter buffer (each
/// parameter aligned to its own alignment, as the CUDA driver packs them), size, align.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub offset: usize,
    pub size: usize,
    pub align: usize,
}

/// Grid and block dimensions of a launch.
#[derive(Clone, Copy, Debug)]
pub struct LaunchDims {
    pub grid: [u32; 3],
    pub block: [u32; 3],
}

/// A parsed, pre-decoded module. Immutable after load.
pub struct Module {
    target: String,
}

impl Module {
    /// Parses and checks `ptx`; allocates and initialises its module-scope `.global`
    /// variables in `mem`.
    pub fn load(_ptx: &str, _mem: &mut Memory) -> Result<Module, LoadError> {
        Err(LoadError::Unsupported { line: 0, message: "not yet implemented".into() })
    }

    /// Frees the module's globals.
    pub fn unload(self, _mem: &mut Memory) {}

    /// The `.target` architecture, e.g. "sm_80".
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The `.entry` named `name`.
    pub fn entry(&self, _name: &str) -> Option<EntryId> {
        None
    }

    /// Names of all `.entry` functions, in module order.
    pub fn entry_names(&self) -> Vec<&str> {
        Vec::new()
    }

    /// The entry's parameters in declaration order.
    pub fn params(&self, _e: EntryId) -> &[Param] {
        &[]
    }

    /// Size of the packed parameter buffer of the entry.
    pub fn param_buffer_size(&self, _e: EntryId) -> usize {
        0
    }

    /// (address, size) of a module-scope variable (cuModuleGetGlobal).
    pub fn global(&self, _name: &str) -> Option<(u64, usize)> {
        None
    }
}

/// Runs every thread of the launch, one after another.
pub fn launch(
    _module: &Module,
    _entry: EntryId,
    _dims: LaunchDims,
    _params: &[u8],
    _mem: &mut Memory,
) -> Result<LaunchStats, Fault> {
    Err(Fault::InvalidLaunch("not yet implemented".into()))
}
