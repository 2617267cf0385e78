//! Bounds-checked big-endian reading and writing shared by every payload codec.

use super::error::{WireError, WireResult};
use bytes::{BufMut, Bytes, BytesMut};

/// Reads big-endian primitives from a `Bytes` without copying byte fields:
/// `bytes()` hands out slices that share the input's buffer.
pub(crate) struct Reader {
    buf: Bytes,
    pos: usize,
}

impl Reader {
    pub(crate) fn new(buf: Bytes) -> Self {
        Reader { buf, pos: 0 }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize, what: &'static str) -> WireResult<&[u8]> {
        if self.remaining() < n {
            return Err(WireError::Truncated {
                what,
                needed: n as u64,
                remaining: self.remaining() as u64,
            });
        }
        let start = self.pos;
        self.pos += n;
        Ok(&self.buf[start..start + n])
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> WireResult<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> WireResult<u8> {
        Ok(self.array::<1>(what)?[0])
    }
    pub(crate) fn u16(&mut self, what: &'static str) -> WireResult<u16> {
        self.array(what).map(u16::from_be_bytes)
    }
    pub(crate) fn i16(&mut self, what: &'static str) -> WireResult<i16> {
        self.array(what).map(i16::from_be_bytes)
    }
    pub(crate) fn u32(&mut self, what: &'static str) -> WireResult<u32> {
        self.array(what).map(u32::from_be_bytes)
    }
    pub(crate) fn i32(&mut self, what: &'static str) -> WireResult<i32> {
        self.array(what).map(i32::from_be_bytes)
    }
    pub(crate) fn u64(&mut self, what: &'static str) -> WireResult<u64> {
        self.array(what).map(u64::from_be_bytes)
    }
    pub(crate) fn i64(&mut self, what: &'static str) -> WireResult<i64> {
        self.array(what).map(i64::from_be_bytes)
    }

    /// A length-prefixed byte field, as a zero-copy slice of the input.
    pub(crate) fn bytes(&mut self, what: &'static str) -> WireResult<Bytes> {
        let len = self.u32(what)? as usize;
        if self.remaining() < len {
            return Err(WireError::Truncated {
                what,
                needed: len as u64,
                remaining: self.remaining() as u64,
            });
        }
        let out = self.buf.slice(self.pos..self.pos + len);
        self.pos += len;
        Ok(out)
    }

    /// A length-prefixed `str` field; must be valid UTF-8.
    pub(crate) fn string(&mut self, what: &'static str) -> WireResult<String> {
        let len = self.u32(what)? as usize;
        let raw = self.take(len, what)?;
        std::str::from_utf8(raw)
            .map(str::to_owned)
            .map_err(|_| WireError::InvalidUtf8(what))
    }

    /// A length-prefixed `str` compared against `expected` without allocating.
    /// Returns `None` when equal, or the decoded text when it differs.
    pub(crate) fn string_unless_eq(
        &mut self,
        expected: &str,
        what: &'static str,
    ) -> WireResult<Option<String>> {
        let len = self.u32(what)? as usize;
        let raw = self.take(len, what)?;
        if raw == expected.as_bytes() {
            return Ok(None);
        }
        std::str::from_utf8(raw)
            .map(|s| Some(s.to_owned()))
            .map_err(|_| WireError::InvalidUtf8(what))
    }

    /// Fails unless every byte has been consumed.
    pub(crate) fn finish(&self, what: &'static str) -> WireResult<()> {
        match self.remaining() {
            0 => Ok(()),
            count => Err(WireError::TrailingBytes { what, count }),
        }
    }
}

/// Writes a `u32` length then the bytes.
pub(crate) fn put_bytes(dst: &mut BytesMut, value: &[u8], what: &'static str) -> WireResult<()> {
    let len = u32::try_from(value.len()).map_err(|_| WireError::FieldTooLong {
        what,
        len: value.len(),
    })?;
    dst.put_u32(len);
    dst.put_slice(value);
    Ok(())
}

/// Writes a `str` field.
pub(crate) fn put_str(dst: &mut BytesMut, value: &str, what: &'static str) -> WireResult<()> {
    put_bytes(dst, value.as_bytes(), what)
}
