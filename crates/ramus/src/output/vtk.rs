//! Binary data arrays of VTK XML files (the "VTK File Formats" document, section "XML
//! File Formats": `header_type="UInt64"`, appended raw or inline base64 data, optional
//! `vtkZLibDataCompressor`), shared by the image (`.vti`) and unstructured (`.vtu`)
//! writers, and the reader that decodes them back (tests, tools).
//!
//! Layout of one array's bytes, as VTK reads them: uncompressed, a `u64` byte count and
//! the little-endian values; compressed, a header of `u64`s `[blocks, block size, size of
//! the last block (0 if full), compressed size of each block]` and the zlib streams of
//! the blocks of at most [`ZLIB_BLOCK`] bytes. Appended data follow the `_` of
//! `<AppendedData encoding="raw">`, each array at its `offset`; inline (`format="binary"`)
//! data are base64, the header and the blocks encoded separately when compressed.

use std::fmt::Write as _;
use std::io::Write as _;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Uncompressed size of a compressed block (VTK's default).
pub const ZLIB_BLOCK: usize = 1 << 15;

/// Where the binary data of the arrays go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// Raw bytes appended after the XML (`<AppendedData encoding="raw">`): the smallest
    /// and fastest.
    #[default]
    Appended,
    /// Base64 inside each `<DataArray format="binary">`: the file is valid XML text.
    Base64,
}

/// Compression of the binary data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// None.
    #[default]
    None,
    /// zlib (`vtkZLibDataCompressor`), fast level.
    Zlib,
}

/// How a VTK XML file stores its arrays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VtkFormat {
    /// Appended raw data or inline base64.
    #[serde(default)]
    pub encoding: Encoding,
    /// Compression.
    #[serde(default)]
    pub compression: Compression,
}

/// The values of one data array (cell data, point coordinates).
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// 32-bit floats.
    Float32(Vec<f32>),
    /// 64-bit floats.
    Float64(Vec<f64>),
    /// 32-bit integers.
    Int32(Vec<i32>),
    /// 64-bit integers (connectivity, offsets).
    Int64(Vec<i64>),
    /// Bytes (flags, `vtkGhostType`).
    UInt8(Vec<u8>),
}

impl Values {
    /// Number of scalars (tuples × components).
    pub fn len(&self) -> usize {
        match self {
            Values::Float32(v) => v.len(),
            Values::Float64(v) => v.len(),
            Values::Int32(v) => v.len(),
            Values::Int64(v) => v.len(),
            Values::UInt8(v) => v.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// VTK's type name.
    pub fn type_name(&self) -> &'static str {
        match self {
            Values::Float32(_) => "Float32",
            Values::Float64(_) => "Float64",
            Values::Int32(_) => "Int32",
            Values::Int64(_) => "Int64",
            Values::UInt8(_) => "UInt8",
        }
    }

    /// Value `i` as `f64`.
    pub fn get(&self, i: usize) -> Option<f64> {
        match self {
            Values::Float32(v) => v.get(i).map(|&x| x as f64),
            Values::Float64(v) => v.get(i).copied(),
            Values::Int32(v) => v.get(i).map(|&x| x as f64),
            Values::Int64(v) => v.get(i).map(|&x| x as f64),
            Values::UInt8(v) => v.get(i).map(|&x| x as f64),
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Values::Float32(v) => bytemuck::cast_slice(v),
            Values::Float64(v) => bytemuck::cast_slice(v),
            Values::Int32(v) => bytemuck::cast_slice(v),
            Values::Int64(v) => bytemuck::cast_slice(v),
            Values::UInt8(v) => v,
        }
    }

    /// Index of the first value that is NaN or infinite.
    fn first_non_finite(&self) -> Option<usize> {
        match self {
            Values::Float32(v) => v.iter().position(|x| !x.is_finite()),
            Values::Float64(v) => v.iter().position(|x| !x.is_finite()),
            _ => None,
        }
    }

    fn from_bytes(ty: &str, b: &[u8]) -> Option<Values> {
        let f = |n: usize| b.len() % n == 0;
        Some(match ty {
            "Float32" if f(4) => {
                Values::Float32(b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect())
            }
            "Float64" if f(8) => {
                Values::Float64(b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect())
            }
            "Int32" if f(4) => {
                Values::Int32(b.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect())
            }
            "Int64" if f(8) => {
                Values::Int64(b.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().unwrap())).collect())
            }
            "UInt8" => Values::UInt8(b.to_vec()),
            _ => return None,
        })
    }
}

/// A named array of `components` values per tuple.
#[derive(Clone, Debug, PartialEq)]
pub struct DataArray {
    /// Its name in ParaView.
    pub name: String,
    /// Values per tuple (1 for scalars, 3 for vectors).
    pub components: usize,
    /// The values, tuple after tuple.
    pub values: Values,
}

impl DataArray {
    /// A scalar array.
    pub fn scalars(name: &str, values: Values) -> Self {
        DataArray { name: name.into(), components: 1, values }
    }

    /// A 3-component array.
    pub fn vectors(name: &str, values: Values) -> Self {
        DataArray { name: name.into(), components: 3, values }
    }

    /// Number of tuples.
    pub fn tuples(&self) -> usize {
        self.values.len() / self.components.max(1)
    }
}

/// The `u64` header and the payload of one array, as VTK expects them.
fn encode_blocks(bytes: &[u8], compression: Compression) -> Result<(Vec<u64>, Vec<u8>)> {
    match compression {
        Compression::None => Ok((vec![bytes.len() as u64], bytes.to_vec())),
        Compression::Zlib => {
            let blocks: Vec<&[u8]> = bytes.chunks(ZLIB_BLOCK).collect();
            let last = bytes.len() % ZLIB_BLOCK;
            let mut header = vec![blocks.len() as u64, ZLIB_BLOCK as u64, last as u64];
            let mut out = Vec::new();
            for b in blocks {
                let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
                z.write_all(b).map_err(|e| Error::invalid("zlib stream", e, "compressible data"))?;
                let c = z.finish().map_err(|e| Error::invalid("zlib stream", e, "compressible data"))?;
                header.push(c.len() as u64);
                out.extend_from_slice(&c);
            }
            Ok((header, out))
        }
    }
}

fn header_bytes(h: &[u64]) -> Vec<u8> {
    h.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Builds the `<DataArray>` elements of one file and its appended data.
pub(crate) struct ArrayWriter {
    format: VtkFormat,
    appended: Vec<u8>,
}

impl ArrayWriter {
    pub(crate) fn new(format: VtkFormat) -> Self {
        ArrayWriter { format, appended: Vec::new() }
    }

    /// The attributes of the `<VTKFile>` element for this format.
    pub(crate) fn file_attributes(&self) -> &'static str {
        match self.format.compression {
            Compression::None => r#"byte_order="LittleEndian" header_type="UInt64""#,
            Compression::Zlib => r#"byte_order="LittleEndian" header_type="UInt64" compressor="vtkZLibDataCompressor""#,
        }
    }

    /// Writes `a` as a `<DataArray>` element (indented by `indent`). A NaN or infinite
    /// value is an [`Error::NonFiniteOutput`]: no file ever holds one.
    pub(crate) fn array(&mut self, xml: &mut String, indent: &str, a: &DataArray) -> Result<()> {
        if let Some(i) = a.values.first_non_finite() {
            return Err(Error::NonFiniteOutput { array: a.name.clone(), index: i / a.components.max(1) });
        }
        let (header, payload) = encode_blocks(a.values.bytes(), self.format.compression)?;
        let range = if a.components == 1 && !a.values.is_empty() {
            let (lo, hi) = (0..a.values.len())
                .filter_map(|i| a.values.get(i))
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)));
            format!(r#" RangeMin="{lo:e}" RangeMax="{hi:e}""#)
        } else {
            String::new()
        };
        let head = format!(
            r#"{indent}<DataArray type="{}" Name="{}" NumberOfComponents="{}"{range}"#,
            a.values.type_name(),
            a.name,
            a.components
        );
        match self.format.encoding {
            Encoding::Appended => {
                let _ = writeln!(xml, r#"{head} format="appended" offset="{}"/>"#, self.appended.len());
                self.appended.extend_from_slice(&header_bytes(&header));
                self.appended.extend_from_slice(&payload);
            }
            Encoding::Base64 => {
                let text = match self.format.compression {
                    Compression::None => {
                        let mut all = header_bytes(&header);
                        all.extend_from_slice(&payload);
                        BASE64.encode(all)
                    }
                    Compression::Zlib => BASE64.encode(header_bytes(&header)) + &BASE64.encode(&payload),
                };
                let _ = writeln!(xml, r#"{head} format="binary">"#);
                let _ = writeln!(xml, "{indent}  {text}");
                let _ = writeln!(xml, "{indent}</DataArray>");
            }
        }
        Ok(())
    }

    /// The file's bytes: `xml` (which must end where `</VTKFile>` goes) and the appended
    /// data, if any.
    pub(crate) fn finish(self, mut xml: String) -> Vec<u8> {
        if self.format.encoding == Encoding::Base64 || self.appended.is_empty() {
            xml.push_str("</VTKFile>\n");
            return xml.into_bytes();
        }
        xml.push_str("  <AppendedData encoding=\"raw\">\n   _");
        let mut out = xml.into_bytes();
        out.extend_from_slice(&self.appended);
        out.extend_from_slice(b"\n  </AppendedData>\n</VTKFile>\n");
        out
    }
}

/// One `<DataArray>` read back by [`read_arrays`].
#[derive(Clone, Debug, PartialEq)]
pub struct ReadArray {
    /// `Name`.
    pub name: String,
    /// `NumberOfComponents`.
    pub components: usize,
    /// The decoded values.
    pub values: Values,
    /// `RangeMin`, `RangeMax` if written.
    pub range: Option<(f64, f64)>,
}

/// Value of attribute `name` in the start tag `tag`.
pub fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    let j = tag[i..].find('"')?;
    Some(&tag[i..i + j])
}

fn bad(what: impl Into<String>) -> Error {
    Error::invalid("VTK XML file", what.into(), "a file as ramus writes it")
}

fn u64s(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Decodes one array's bytes given the header/payload layout of [`encode_blocks`].
fn decode_payload(header: &[u64], payload: &[u8], zlib: bool) -> Result<Vec<u8>> {
    if !zlib {
        let n = *header.first().ok_or_else(|| bad("an empty header"))? as usize;
        return payload.get(..n).map(<[u8]>::to_vec).ok_or_else(|| bad("data shorter than its header"));
    }
    let mut out = Vec::new();
    let mut at = 0usize;
    for &c in header.get(3..).ok_or_else(|| bad("a short zlib header"))? {
        let end = at.checked_add(c as usize).ok_or_else(|| bad("a zlib block size"))?;
        let block = payload.get(at..end).ok_or_else(|| bad("a truncated zlib block"))?;
        let mut z = flate2::read::ZlibDecoder::new(block);
        std::io::Read::read_to_end(&mut z, &mut out).map_err(|e| bad(format!("zlib: {e}")))?;
        at = end;
    }
    Ok(out)
}

/// Every `<DataArray>` of a file written by this module, in order, with its values
/// decoded (appended or base64, compressed or not): for tests and tools.
pub fn read_arrays(bytes: &[u8]) -> Result<Vec<ReadArray>> {
    let marker = b"<AppendedData encoding=\"raw\">";
    let (xml_end, appended) = match bytes.windows(marker.len()).position(|w| w == marker) {
        Some(p) => {
            let u = bytes[p..].iter().position(|&c| c == b'_').ok_or_else(|| bad("no `_` after <AppendedData>"))?;
            (p, Some(&bytes[p + u + 1..]))
        }
        None => (bytes.len(), None),
    };
    let xml = std::str::from_utf8(&bytes[..xml_end]).map_err(|_| bad("XML that is not UTF-8"))?;
    let zlib = xml.contains("compressor=\"vtkZLibDataCompressor\"");
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(i) = rest.find("<DataArray ") {
        rest = &rest[i..];
        let end = rest.find('>').ok_or_else(|| bad("an unterminated <DataArray>"))?;
        let tag = &rest[..end];
        let ty = attribute(tag, "type").ok_or_else(|| bad("a <DataArray> without type"))?;
        let name = attribute(tag, "Name").unwrap_or("").to_string();
        let components = attribute(tag, "NumberOfComponents").and_then(|s| s.parse().ok()).unwrap_or(1);
        let range = match (attribute(tag, "RangeMin"), attribute(tag, "RangeMax")) {
            (Some(a), Some(b)) => {
                Some((a.parse().map_err(|_| bad("RangeMin"))?, b.parse().map_err(|_| bad("RangeMax"))?))
            }
            _ => None,
        };
        let raw = match attribute(tag, "format") {
            Some("appended") => {
                let data = appended.ok_or_else(|| bad("appended arrays without <AppendedData>"))?;
                let off: usize = attribute(tag, "offset").and_then(|s| s.parse().ok()).ok_or_else(|| bad("offset"))?;
                let d = data.get(off..).ok_or_else(|| bad("an offset past the data"))?;
                let first = u64s(d.get(..8).ok_or_else(|| bad("a truncated header"))?)[0] as usize;
                let words = if zlib { first.checked_add(3).ok_or_else(|| bad("a block count"))? } else { 1 };
                let end = words.checked_mul(8).filter(|&e| e <= d.len()).ok_or_else(|| bad("a truncated header"))?;
                decode_payload(&u64s(&d[..end]), &d[end..], zlib)?
            }
            Some("binary") => {
                let close = rest.find("</DataArray>").ok_or_else(|| bad("an unterminated binary <DataArray>"))?;
                let text: String = rest[end + 1..close].split_whitespace().collect();
                if zlib {
                    // The header is encoded on its own: its length follows from its first word.
                    let first = BASE64.decode(&text[..12.min(text.len())]).map_err(|_| bad("base64"))?;
                    let n = u64s(first.get(..8).ok_or_else(|| bad("a short header"))?)[0] as usize;
                    let hlen = n
                        .checked_add(3)
                        .and_then(|w| w.checked_mul(8))
                        .map(|b| b.div_ceil(3) * 4)
                        .filter(|&h| h <= text.len())
                        .ok_or_else(|| bad("a truncated base64 header"))?;
                    let header = u64s(&BASE64.decode(&text[..hlen]).map_err(|_| bad("base64 header"))?);
                    let payload = BASE64.decode(&text[hlen..]).map_err(|_| bad("base64 data"))?;
                    decode_payload(&header, &payload, true)?
                } else {
                    let all = BASE64.decode(&text).map_err(|_| bad("base64"))?;
                    decode_payload(&u64s(&all[..8.min(all.len())]), &all[8.min(all.len())..], false)?
                }
            }
            other => return Err(bad(format!("a <DataArray> of format {other:?}"))),
        };
        let values = Values::from_bytes(ty, &raw).ok_or_else(|| bad(format!("an array of type {ty}")))?;
        out.push(ReadArray { name, components, values, range });
        rest = &rest[end..];
    }
    Ok(out)
}
