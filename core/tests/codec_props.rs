//! Property tests for the codecs, ObjectId and flake-128.

use idforge_core::encode::{base32, base62, decimal, hex};
use idforge_core::flake128::{Flake128, Flake128Gen};
use idforge_core::objectid::ObjectId;
use idforge_core::tick::Next;
use proptest::prelude::*;

proptest! {
    #[test]
    fn u64_codecs_round_trip(v in any::<u64>()) {
        let b62 = base62::encode_u64(v, &mut [0; base62::U64_LEN]).to_owned();
        prop_assert_eq!(b62.len(), base62::U64_LEN);
        prop_assert_eq!(base62::decode_u64(b62.as_bytes()), Ok(v));
        // Unpadded input decodes to the same value.
        prop_assert_eq!(base62::decode_u64(b62.trim_start_matches('0').as_bytes()).ok(),
            (v != 0).then_some(v));

        let b32 = base32::encode_u64(v, &mut [0; base32::U64_LEN]).to_owned();
        prop_assert_eq!(base32::decode_u64(b32.as_bytes()), Ok(v));
        prop_assert_eq!(base32::decode_u64(b32.to_ascii_lowercase().as_bytes()), Ok(v));

        let h = hex::encode_u64(v, &mut [0; hex::U64_LEN]).to_owned();
        prop_assert_eq!(&h, &format!("{v:016x}"));
        prop_assert_eq!(hex::decode_u64(h.to_ascii_uppercase().as_bytes()), Ok(v));

        let d = decimal::encode_u64(v, &mut [0; decimal::U64_LEN]).to_owned();
        prop_assert_eq!(&d, &v.to_string());
        prop_assert_eq!(decimal::decode_u64(d.as_bytes()), Ok(v));
    }

    #[test]
    fn u128_codecs_round_trip(v in any::<u128>()) {
        let b62 = base62::encode_u128(v, &mut [0; base62::U128_LEN]).to_owned();
        prop_assert_eq!(b62.len(), base62::U128_LEN);
        prop_assert_eq!(base62::decode_u128(b62.as_bytes()), Ok(v));
        let b32 = base32::encode_u128(v, &mut [0; base32::U128_LEN]).to_owned();
        prop_assert_eq!(base32::decode_u128(b32.as_bytes()), Ok(v));
        let h = hex::encode_u128(v, &mut [0; hex::U128_LEN]).to_owned();
        prop_assert_eq!(&h, &format!("{v:032x}"));
        prop_assert_eq!(hex::decode_u128(h.as_bytes()), Ok(v));
    }

    #[test]
    fn padded_strings_sort_like_numbers_u64(a in any::<u64>(), b in any::<u64>()) {
        let sa = base62::encode_u64(a, &mut [0; base62::U64_LEN]).to_owned();
        let sb = base62::encode_u64(b, &mut [0; base62::U64_LEN]).to_owned();
        prop_assert_eq!(sa.cmp(&sb), a.cmp(&b));
        let ta = base32::encode_u64(a, &mut [0; base32::U64_LEN]).to_owned();
        let tb = base32::encode_u64(b, &mut [0; base32::U64_LEN]).to_owned();
        prop_assert_eq!(ta.cmp(&tb), a.cmp(&b));
    }

    #[test]
    fn padded_strings_sort_like_numbers_u128(a in any::<u128>(), b in any::<u128>()) {
        let sa = base62::encode_u128(a, &mut [0; base62::U128_LEN]).to_owned();
        let sb = base62::encode_u128(b, &mut [0; base62::U128_LEN]).to_owned();
        prop_assert_eq!(sa.cmp(&sb), a.cmp(&b));
        let ta = base32::encode_u128(a, &mut [0; base32::U128_LEN]).to_owned();
        let tb = base32::encode_u128(b, &mut [0; base32::U128_LEN]).to_owned();
        prop_assert_eq!(ta.cmp(&tb), a.cmp(&b));
    }

    #[test]
    fn sort_order_near_each_other(a in any::<u128>(), d in 0u128..1000) {
        // Random pairs are almost never close; also compare neighbours.
        let b = a.saturating_add(d);
        let sa = base62::encode_u128(a, &mut [0; base62::U128_LEN]).to_owned();
        let sb = base62::encode_u128(b, &mut [0; base62::U128_LEN]).to_owned();
        prop_assert_eq!(sa.cmp(&sb), a.cmp(&b));
    }

    #[test]
    fn hex_bytes_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut text = vec![0u8; bytes.len() * 2];
        let s = hex::encode_bytes(&bytes, &mut text).unwrap().to_owned();
        let expected: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        prop_assert_eq!(&s, &expected);
        let mut back = vec![0u8; bytes.len()];
        hex::decode_bytes(s.to_ascii_uppercase().as_bytes(), &mut back).unwrap();
        prop_assert_eq!(back, bytes);
    }

    #[test]
    fn decoders_never_panic(s in "\\PC{0,40}") {
        let b = s.as_bytes();
        let _ = (base62::decode_u64(b), base62::decode_u128(b), base32::decode_u64(b),
            base32::decode_u128(b), hex::decode_u64(b), hex::decode_u128(b),
            decimal::decode_u64(b), ObjectId::parse_hex(&s), Flake128::parse_base62(&s),
            Flake128::parse_hex(&s));
    }

    #[test]
    fn objectid_round_trips(bytes in any::<[u8; 12]>()) {
        let id = ObjectId::from_bytes(bytes);
        let h = id.to_hex(&mut [0; ObjectId::HEX_LEN]).to_owned();
        prop_assert_eq!(ObjectId::parse_hex(&h), Ok(id));
        prop_assert_eq!(ObjectId::parse_hex(&h.to_ascii_uppercase()), Ok(id));
        prop_assert_eq!(id.to_string(), h);
        prop_assert_eq!(ObjectId::try_from_slice(&bytes), Ok(id));
        let secs = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        prop_assert_eq!(id.timestamp(), secs);
    }

    #[test]
    fn objectid_parts_round_trip(
        secs in any::<u32>(),
        process in any::<[u8; 5]>(),
        counter in any::<u32>(),
    ) {
        let b = ObjectId::from_parts(secs, process, counter).bytes();
        prop_assert_eq!(u32::from_be_bytes([b[0], b[1], b[2], b[3]]), secs);
        prop_assert_eq!(&b[4..9], &process[..]);
        prop_assert_eq!(u32::from_be_bytes([0, b[9], b[10], b[11]]), counter & 0xFF_FFFF);
    }

    #[test]
    fn flake128_round_trips(
        time in any::<u64>(),
        worker in 0..=Flake128::MAX_WORKER,
        seq in any::<u16>(),
    ) {
        let f = Flake128::from_parts(time, worker, seq).unwrap();
        prop_assert_eq!((f.time_ms(), f.worker(), f.seq()), (time, worker, seq));
        prop_assert_eq!(Flake128::from_bytes(f.to_bytes()), f);
        prop_assert_eq!(Flake128::from_u128(f.as_u128()), f);
        let b62 = f.to_base62(&mut [0; Flake128::BASE62_LEN]).to_owned();
        prop_assert_eq!(Flake128::parse_base62(&b62), Ok(f));
        let unpadded = b62.trim_start_matches('0');
        if !unpadded.is_empty() {
            prop_assert_eq!(Flake128::parse_base62(unpadded), Ok(f));
        }
        let h = f.to_hex(&mut [0; Flake128::HEX_LEN]).to_owned();
        prop_assert_eq!(Flake128::parse_hex(&h), Ok(f));
    }

    #[test]
    fn flake128_bytes_and_text_sort_by_value(a in any::<u128>(), b in any::<u128>()) {
        let (fa, fb) = (Flake128::from_u128(a), Flake128::from_u128(b));
        prop_assert_eq!(fa.to_bytes().cmp(&fb.to_bytes()), a.cmp(&b));
        prop_assert_eq!(fa.to_string().cmp(&fb.to_string()), a.cmp(&b));
        prop_assert_eq!(fa.cmp(&fb), a.cmp(&b));
    }

    /// Whatever the clock does (steps back, stalls, jumps), ids strictly increase.
    #[test]
    fn flake128_gen_strictly_increases(
        start in 0u64..(1 << 46),
        max_lead in 0u64..4,
        steps in proptest::collection::vec((-50i64..=50, 1usize..5), 1..200),
    ) {
        let g = Flake128Gen::new(0xABC, max_lead).unwrap();
        let mut clock = start;
        let mut last: Option<Flake128> = None;
        let mut issued = 0usize;
        for (delta, burst) in steps {
            clock = clock.saturating_add_signed(delta);
            for _ in 0..burst {
                let id = loop {
                    match g.next(clock).unwrap() {
                        Next::Id(id) => break id,
                        Next::Pending { until_ms } => {
                            // The generator must ask for a later clock, or we would spin forever.
                            prop_assert!(until_ms > clock, "pending until {until_ms} at {clock}");
                            clock = until_ms;
                        }
                    }
                };
                prop_assert!(last < Some(id), "{last:?} then {id:?}");
                // Never further ahead of the clock than allowed.
                prop_assert!(id.time_ms() <= clock + max_lead);
                prop_assert_eq!(id.worker(), 0xABC);
                last = Some(id);
                issued += 1;
            }
        }
        prop_assert!(issued > 0);
        prop_assert!(g.high_water_ms() >= last.unwrap().time_ms());
    }
}
