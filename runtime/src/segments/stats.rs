//! The records a segments generator reports, [`SegmentStats`] and [`EngineStats`], declared
//! once: [`with_stats_records!`](crate::with_stats_records) hands their fields (names and docs)
//! to a macro of the caller's, which the runtime uses for its own structs below and each
//! binding for its mirror (a napi object, a uniffi record, the C struct's conversion), so a
//! counter added here reaches every language or fails to compile there.

/// Calls `$then! { … }` with the stats records' fields, each with its doc comment, in order:
///
/// ```text
/// segment { #[doc = " …"] ranges_fetched, … }
/// engine  { #[doc = " …"] generators, … }
/// ```
///
/// The docs are written as `#[doc = "…"]` rather than `///`: a `///` line reaches the caller's
/// macro as a raw string (`r" …"`), which napi's generator of TypeScript declarations prints as
/// it is. Every field is a `u64` counter. `segment` lists [`SegmentStats`]'s own counters (it also
/// holds an `engine` field, the [`EngineStats`] of its refill engine), `engine` lists
/// [`EngineStats`]'s. A binding defines `$then` to declare its mirror and its conversion; see
/// the runtime's own use in `segments/stats.rs`.
#[macro_export]
macro_rules! with_stats_records {
    ($then:ident) => {
        $then! {
            segment {
                #[doc = " Ranges fetched from the source."]
                ranges_fetched,
                #[doc = " Fetches that failed."]
                fetch_errors,
                #[doc = " Total time spent fetching, in microseconds."]
                fetch_micros_total,
                #[doc = " The last fetch's duration, in microseconds."]
                fetch_micros_last,
                #[doc = " Calls that found both buffers empty and had to wait."]
                waits,
                #[doc = " The step the next fetch will ask for."]
                step,
                #[doc = " Ids buffered right now."]
                buffered,
            }
            engine {
                #[doc = " Generators the engine serves (each a tag; the same tag twice counts twice)."]
                generators,
                #[doc = " Threads the engine runs now: at most the source's lanes (1 for `idforge://`"]
                #[doc = " and `redis://`, 1 for SQLite, the URL's `pool` for PostgreSQL and MySQL, 2"]
                #[doc = " for `file://`)."]
                threads,
                #[doc = " Connections the source holds open in this process now."]
                connections,
                #[doc = " Requests made to the source (one under way included): a pipelined round"]
                #[doc = " trip, a transaction, one fetch."]
                round_trips,
                #[doc = " Ranges asked for, in all (failed ones included)."]
                refills,
                #[doc = " Ranges asked for in a round trip shared with other tags' ranges."]
                batched_refills,
                #[doc = " Tags waiting for a range now, those waiting to be tried again included."]
                queued,
            }
        }
    };
}

/// The runtime's own structs, with `fields()` for bindings that convert by name (a dict).
macro_rules! runtime_records {
    (
        segment { $( $(#[doc = $sd:tt])* $sf:ident, )* }
        engine { $( $(#[doc = $ed:tt])* $ef:ident, )* }
    ) => {
        /// Counters of a [`Segments`](super::Segments) generator.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub struct SegmentStats {
            $( $(#[doc = $sd])* pub $sf: u64, )*
            /// The process-wide figures of the refill engine serving this generator's source.
            pub engine: EngineStats,
        }

        impl SegmentStats {
            /// How many counters [`SegmentStats::fields`] gives.
            pub const FIELDS: usize = [$(stringify!($sf)),*].len();

            /// The counters by name, in declaration order (`engine` aside: its own
            /// [`EngineStats::fields`]).
            pub fn fields(&self) -> [(&'static str, u64); Self::FIELDS] {
                [$((stringify!($sf), self.$sf)),*]
            }
        }

        /// Figures of the refill engine that serves a generator: every generator of the process
        /// on the same source shares them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub struct EngineStats {
            $( $(#[doc = $ed])* pub $ef: u64, )*
        }

        impl EngineStats {
            /// How many figures [`EngineStats::fields`] gives.
            pub const FIELDS: usize = [$(stringify!($ef)),*].len();

            /// The figures by name, in declaration order.
            pub fn fields(&self) -> [(&'static str, u64); Self::FIELDS] {
                [$((stringify!($ef), self.$ef)),*]
            }
        }
    };
}

with_stats_records!(runtime_records);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_name_every_counter_in_order() {
        let s = SegmentStats {
            ranges_fetched: 1,
            fetch_errors: 2,
            fetch_micros_total: 3,
            fetch_micros_last: 4,
            waits: 5,
            step: 6,
            buffered: 7,
            engine: EngineStats {
                generators: 8,
                threads: 9,
                connections: 10,
                round_trips: 11,
                refills: 12,
                batched_refills: 13,
                queued: 14,
            },
        };
        let names: Vec<&str> = s.fields().iter().map(|f| f.0).collect();
        assert_eq!(
            names,
            [
                "ranges_fetched",
                "fetch_errors",
                "fetch_micros_total",
                "fetch_micros_last",
                "waits",
                "step",
                "buffered"
            ]
        );
        let values: Vec<u64> = s.fields().iter().map(|f| f.1).collect();
        assert_eq!(values, [1, 2, 3, 4, 5, 6, 7]);
        let engine: Vec<(&str, u64)> = s.engine.fields().to_vec();
        assert_eq!(engine[0], ("generators", 8));
        assert_eq!(engine[6], ("queued", 14));
        assert_eq!(EngineStats::FIELDS, 7);
    }
}
