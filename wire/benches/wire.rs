//! Codec throughput: batch encode+decode under each compression, CRC32C, and
//! stream frame decoding. Run with `make bench` (or `cargo bench -p cursus`).

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cursus_wire::*;
use std::hint::black_box;
use tokio_util::codec::Decoder;

/// A 1,000-record batch with `size`-byte payloads of mildly compressible data.
fn batch(size: usize) -> Batch {
    let mut b = Batch::new("bench", 0);
    b.acks = Acks::Leader;
    for i in 0..1000u64 {
        let payload: Vec<u8> = (0..size)
            .map(|j| ((i as usize * 31 + j * 7) % 251) as u8 / 4)
            .collect();
        b.records.push(Record {
            key: Bytes::from(format!("key-{i}")),
            timestamp: 1_700_000_000_000 + i as i64,
            ..Record::new(payload)
        });
    }
    b
}

fn encode_decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("batch_encode_decode");
    for size in [100usize, 1024] {
        let batch = batch(size);
        group.throughput(Throughput::Bytes((size * batch.records.len()) as u64));
        for &compression in Compression::ALL {
            let id = BenchmarkId::new(compression.name(), format!("1000x{size}B"));
            let mut buf = BytesMut::with_capacity(2 * size * 1000);
            group.bench_with_input(id, &batch, |bench, batch| {
                bench.iter(|| {
                    buf.clear();
                    batch
                        .encode(RecordVersionPolicy::Minimal, &mut buf)
                        .unwrap();
                    let payload = buf.split().freeze();
                    let frame = Frame::request(Command::Publish, 1, payload);
                    let wire = frame.to_bytes(compression).unwrap();
                    let decoded = Frame::decode(wire, compression).unwrap();
                    let batch = Batch::decode(decoded.payload).unwrap();
                    black_box(batch.records.len())
                })
            });
        }
    }
    group.finish();
}

fn crc(c: &mut Criterion) {
    let mut group = c.benchmark_group("crc32c");
    for size in [4 * 1024usize, 1 << 20] {
        let data = vec![0x5au8; size];
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(BenchmarkId::from_parameter(size), &data, |b, d| {
            b.iter(|| black_box(crc32c::crc32c(black_box(d))))
        });
    }
    group.finish();
}

fn stream_decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("stream_frame_decode");
    for size in [100usize, 1024, 64 * 1024] {
        let count = (4 << 20) / (size + HEADER_LEN);
        let mut wire = BytesMut::new();
        for i in 0..count {
            Frame::response(Command::Consume, i as u64 + 1, Status::Ok, vec![7u8; size])
                .encode(Compression::None, &mut wire)
                .unwrap();
        }
        let wire = wire.freeze();
        group.throughput(Throughput::Bytes(wire.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("frames", format!("{size}B")),
            &wire,
            |b, wire| {
                b.iter(|| {
                    let mut codec = FrameCodec::new();
                    let mut src = BytesMut::from(&wire[..]);
                    let mut n = 0;
                    while let Some(f) = codec.decode(&mut src).unwrap() {
                        n += f.payload.len();
                    }
                    black_box(n)
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, encode_decode, crc, stream_decode);
criterion_main!(benches);
