//! The dynamic loader looks for `libcuda.so.1` (the soname NVIDIA's driver library
//! carries, recorded in every program linked with -lcuda).
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuda.so.1");
}
