//! A raw RESP2 connection for pipelining many commands with arbitrary bytes
//! and reading every reply as it came, error replies included (the `redis`
//! crate stops a pipeline at the first error).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// One reply as the server sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resp {
    Status(Vec<u8>),
    Error(Vec<u8>),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Resp>>),
}

impl Resp {
    pub fn is_error(&self) -> bool {
        matches!(self, Resp::Error(_))
    }

    pub fn error_text(&self) -> Option<String> {
        match self {
            Resp::Error(e) => Some(String::from_utf8_lossy(e).into_owned()),
            _ => None,
        }
    }

    /// The integers of an array reply (an rl decision), if it is one.
    pub fn ints(&self) -> Option<Vec<i64>> {
        match self {
            Resp::Array(Some(items)) => items
                .iter()
                .map(|i| match i {
                    Resp::Int(v) => Some(*v),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }
}

pub struct RawConn {
    reader: BufReader<TcpStream>,
    writer: BufWriter<TcpStream>,
}

impl RawConn {
    pub fn connect(port: u16) -> RawConn {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        RawConn {
            reader: BufReader::with_capacity(1 << 16, stream.try_clone().unwrap()),
            writer: BufWriter::with_capacity(1 << 16, stream),
        }
    }

    fn write_command(&mut self, args: &[Vec<u8>]) {
        let w = &mut self.writer;
        write!(w, "*{}\r\n", args.len()).unwrap();
        for a in args {
            write!(w, "${}\r\n", a.len()).unwrap();
            w.write_all(a).unwrap();
            w.write_all(b"\r\n").unwrap();
        }
    }

    /// Sends every command, then reads one reply per command. A connection
    /// closed by the server is a panic naming how far it got.
    pub fn pipeline(&mut self, commands: &[Vec<Vec<u8>>]) -> Vec<Resp> {
        for c in commands {
            self.write_command(c);
        }
        self.writer.flush().unwrap();
        (0..commands.len())
            .map(|i| {
                self.read_reply()
                    .unwrap_or_else(|e| panic!("reply {i} of {}: {e}", commands.len()))
            })
            .collect()
    }

    pub fn call(&mut self, args: &[&[u8]]) -> Resp {
        let cmd: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
        self.pipeline(&[cmd]).pop().unwrap()
    }

    fn line(&mut self) -> std::io::Result<Vec<u8>> {
        let mut line = Vec::new();
        self.reader.read_until(b'\n', &mut line)?;
        if !line.ends_with(b"\r\n") {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("connection closed or bad line {line:?}"),
            ));
        }
        line.truncate(line.len() - 2);
        Ok(line)
    }

    fn read_reply(&mut self) -> std::io::Result<Resp> {
        let line = self.line()?;
        let (kind, rest) = line.split_first().ok_or_else(|| bad("empty line"))?;
        let num = || -> std::io::Result<i64> {
            std::str::from_utf8(rest)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| bad("bad number"))
        };
        Ok(match kind {
            b'+' => Resp::Status(rest.to_vec()),
            b'-' => Resp::Error(rest.to_vec()),
            b':' => Resp::Int(num()?),
            b'$' => {
                let n = num()?;
                if n < 0 {
                    Resp::Bulk(None)
                } else {
                    let mut buf = vec![0; n as usize + 2];
                    self.reader.read_exact(&mut buf)?;
                    buf.truncate(n as usize);
                    Resp::Bulk(Some(buf))
                }
            }
            b'*' => {
                let n = num()?;
                if n < 0 {
                    Resp::Array(None)
                } else {
                    let items = (0..n)
                        .map(|_| self.read_reply())
                        .collect::<std::io::Result<Vec<_>>>()?;
                    Resp::Array(Some(items))
                }
            }
            other => return Err(bad(&format!("unexpected reply type {other}"))),
        })
    }
}

fn bad(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string())
}

/// A command line from text arguments.
pub fn line(args: &[&str]) -> Vec<Vec<u8>> {
    args.iter().map(|a| a.as_bytes().to_vec()).collect()
}

/// A tiny seeded xorshift64* generator: the same seed gives the same inputs,
/// so a failure reproduces.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// Sending and reading apart, for clients that wait (`WAIT`): the reply of
/// a held call is read later, or never (a disconnect).
impl RawConn {
    pub fn send(&mut self, args: &[&str]) {
        let cmd: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
        self.write_command(&cmd);
        self.writer.flush().unwrap();
    }

    pub fn recv(&mut self) -> Resp {
        self.read_reply()
            .unwrap_or_else(|e| panic!("reading a reply: {e}"))
    }
}
