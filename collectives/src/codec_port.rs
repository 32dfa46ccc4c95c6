//! The one door to the codecs: compress a slice of values to bytes, decompress bytes
//! into a slice. The algorithms cut their messages into pieces and call this per piece,
//! so they are written once for every codec; the implementation calls codec-host's
//! public API.

use std::sync::OnceLock;

use codec_host::{Codec, CpuExecutor, Shape};

use crate::Value;

/// Compression of one piece of a message.
pub(crate) trait PieceCodec {
    /// Appends the compressed form of `values` (at least one value) to `out`.
    fn compress<T: Value>(&self, values: &[T], out: &mut Vec<u8>) -> codec_host::Result<()>;
    /// Decodes `bytes`, which must hold exactly `out.len()` values of type `T`.
    fn decompress<T: Value>(&self, bytes: &[u8], out: &mut [T]) -> codec_host::Result<()>;
}

/// A codec-host codec on the collectives' executor.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostCodec {
    pub codec: Codec,
}

impl PieceCodec for HostCodec {
    fn compress<T: Value>(&self, values: &[T], out: &mut Vec<u8>) -> codec_host::Result<()> {
        let stream = self.codec.compress_with(values, Shape::d1(values.len()), executor())?;
        out.extend_from_slice(&stream);
        Ok(())
    }

    fn decompress<T: Value>(&self, bytes: &[u8], out: &mut [T]) -> codec_host::Result<()> {
        let info = codec_host::inspect(bytes)?;
        if info.elem != T::TYPE {
            return Err(codec_host::Error::TypeMismatch { stream: info.elem, requested: T::TYPE });
        }
        if info.shape.len() != out.len() || info.stream_bytes != bytes.len() {
            return Err(codec_host::Error::Corrupt(format!(
                "stream of {} values in {} bytes where the frame says {} values in {} bytes",
                info.shape.len(),
                info.stream_bytes,
                out.len(),
                bytes.len()
            )));
        }
        codec_host::decompress_into_with(bytes, out, executor())?;
        Ok(())
    }
}

/// Environment variable: worker threads of the collectives' codec executor.
pub const ENV_CODEC_THREADS: &str = "CCOLL_CODEC_THREADS";

/// The executor the collectives compress on: [`ENV_CODEC_THREADS`] threads if set, else
/// the cores divided among the ranks of this node (from the launcher's local-size
/// variable), so that oversubscribed ranks do not fight over cores.
pub(crate) fn executor() -> &'static CpuExecutor {
    static EXEC: OnceLock<CpuExecutor> = OnceLock::new();
    EXEC.get_or_init(|| {
        let env_usize = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<usize>().ok());
        let threads = env_usize(ENV_CODEC_THREADS).unwrap_or_else(|| {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let local = env_usize("OMPI_COMM_WORLD_LOCAL_SIZE").or_else(|| env_usize("MPI_LOCALNRANKS")).unwrap_or(1);
            (cores / local.max(1)).max(1)
        });
        CpuExecutor::new(threads.max(1)).unwrap_or_else(|_| CpuExecutor::new(1).expect("a one-thread executor needs no pool"))
    })
}
