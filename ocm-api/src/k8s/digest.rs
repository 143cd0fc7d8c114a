//! Hex digests: lower-case hex text, SHA-256 and MD5.
//!
//! Upstream OCM names and compares things by digests written as lower-case hex (Go's
//! `fmt.Sprintf("%x", sum)` and `hex.EncodeToString`): the hub hash of the work agent and the
//! executor cache key are SHA-256, the manifest configuration hash, the addon configuration
//! spec hash and sdk-go's required-object hash are MD5 (kept for interoperability, not for
//! security).
//!
//! ```
//! use ocm_api::k8s::digest;
//!
//! assert_eq!(digest::hex(&[0x00, 0xab, 0xff]), "00abff");
//! assert_eq!(
//!     digest::sha256_hex(b""),
//!     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
//! );
//! assert_eq!(digest::md5_hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
//! ```

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `bytes` as lower-case hex, two digits a byte (Go's `hex.EncodeToString`).
pub fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    out
}

/// The lower-case hex SHA-256 of `data` (64 characters).
pub fn sha256_hex(data: &[u8]) -> String {
    hex(ring::digest::digest(&ring::digest::SHA256, data).as_ref())
}

/// The lower-case hex MD5 of `data` (32 characters).
pub fn md5_hex(data: &[u8]) -> String {
    use md5::Digest;
    hex(&md5::Md5::digest(data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lower_case_and_two_digits_a_byte() {
        assert_eq!(hex(&[]), "");
        assert_eq!(hex(&[0, 1, 0x0f, 0x10, 0xa5, 0xff]), "00010f10a5ff");
    }

    #[test]
    fn known_vectors() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(md5_hex(b"abc"), "900150983cd24fb0d6963f7d28e17f72");
    }
}
