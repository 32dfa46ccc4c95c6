//! Opaque handles: every object the API hands out lives in a registry keyed by the
//! handle's value, so a stale or forged handle is answered with an error instead of
//! being dereferenced.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Handle values start here and step by 16: never null and never one of the special
/// stream handles (1, 2).
const FIRST_HANDLE: usize = 0x1_0000;

static NEXT: AtomicUsize = AtomicUsize::new(FIRST_HANDLE);

pub struct Registry<T> {
    items: Mutex<HashMap<usize, Arc<T>>>,
}

impl<T> Registry<T> {
    pub fn new() -> Self {
        Registry { items: Mutex::new(HashMap::new()) }
    }

    /// Stores `item` under a fresh handle (unique across all registries).
    pub fn insert(&self, item: Arc<T>) -> *mut c_void {
        let key = NEXT.fetch_add(16, Ordering::Relaxed);
        self.items.lock().unwrap().insert(key, item);
        key as *mut c_void
    }

    /// Stores the item `make` builds from its own handle.
    pub fn insert_with<E>(&self, make: impl FnOnce(usize) -> Result<T, E>) -> Result<*mut c_void, E> {
        let key = NEXT.fetch_add(16, Ordering::Relaxed);
        let item = Arc::new(make(key)?);
        self.items.lock().unwrap().insert(key, item);
        Ok(key as *mut c_void)
    }

    pub fn get(&self, handle: *mut c_void) -> Option<Arc<T>> {
        self.items.lock().unwrap().get(&(handle as usize)).cloned()
    }

    pub fn remove(&self, handle: *mut c_void) -> Option<Arc<T>> {
        self.items.lock().unwrap().remove(&(handle as usize))
    }

    /// Every item, in no particular order.
    pub fn all(&self) -> Vec<Arc<T>> {
        self.items.lock().unwrap().values().cloned().collect()
    }

    /// Removes every item `pred` selects, returning them.
    pub fn remove_where(&self, pred: impl Fn(&T) -> bool) -> Vec<Arc<T>> {
        let mut items = self.items.lock().unwrap();
        let keys: Vec<usize> = items.iter().filter(|(_, v)| pred(v)).map(|(k, _)| *k).collect();
        keys.into_iter().filter_map(|k| items.remove(&k)).collect()
    }
}
