//! The master's output ring: the last `capacity` bytes of PTY output and the absolute
//! count of every byte ever written (`total`), the two numbers delta resume runs on.

use std::collections::VecDeque;

#[derive(Debug)]
pub struct Ring {
    bytes: VecDeque<u8>,
    capacity: usize,
    total: u64,
}

impl Ring {
    pub fn new(capacity: usize) -> Ring {
        Ring {
            bytes: VecDeque::with_capacity(capacity),
            capacity,
            total: 0,
        }
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn push(&mut self, data: &[u8]) {
        self.total += data.len() as u64;
        let keep = &data[data.len().saturating_sub(self.capacity)..];
        let overflow = (self.bytes.len() + keep.len()).saturating_sub(self.capacity);
        self.bytes.drain(..overflow);
        self.bytes.extend(keep);
    }

    /// The ring's bytes from ring index `index` to the end (`ring[index..]`).
    pub fn tail_from(&self, index: u64) -> Vec<u8> {
        let index = (index as usize).min(self.bytes.len());
        self.bytes.range(index..).copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_bytes_and_counts_all() {
        let mut r = Ring::new(4);
        r.push(b"ab");
        r.push(b"cde");
        assert_eq!((r.total(), r.len()), (5, 4));
        assert_eq!(r.tail_from(0), b"bcde");
        r.push(b"0123456789");
        assert_eq!((r.total(), r.tail_from(1)), (15, b"789".to_vec()));
        assert!(r.tail_from(9).is_empty());
    }
}
