/// When the log builds compression dictionaries. The defaults are the format's (docs/FORMAT.md
/// §5); tests lower them to train and retrain in short runs.
package struct DictionaryTrainingPolicy: Sendable, Equatable {
    /// New samples since the last dictionary that make the next one worth building.
    package var threshold = 256
    /// After the first, a dictionary is built only at the roll of a segment at least this large
    /// (a dictionary file of up to 64 KiB is then a small cost beside the segment).
    package var retrainingSegmentSize = 1 << 20

    package init() {}
}

/// Collects samples of recent small payloads and builds LZ4 dictionaries from them.
///
/// Records saved by an app repeat the same field names, types and common values; a dictionary
/// made of recent records lets each new one refer to those instead of spelling them out.
/// Building one is cheap: keep the most recent distinct samples, newest last, up to 64 KiB.
package struct DictionaryTrainer: Sendable {
    /// Payloads larger than this compress well alone and are not sampled.
    package static let largestSampledPayload = 4096
    /// Only the first bytes of a sample are kept.
    package static let sampleLimit = 1024

    private var samples: [[UInt8]] = []
    private var next = 0
    private var sampleBytes = 0
    private var seen = 0
    private var seenAtLastTraining = 0
    /// How many samples to keep at most.
    package let capacity: Int
    /// How many new samples make a dictionary worth (re)building.
    package let threshold: Int

    package init(capacity: Int = 512, threshold: Int = 256) {
        self.capacity = capacity
        self.threshold = threshold
    }

    /// Whether enough new samples arrived since the last dictionary.
    package var isReady: Bool { seen - seenAtLastTraining >= threshold }

    /// Whether a payload of this size is worth sampling.
    package func wants(size: Int) -> Bool {
        size <= Self.largestSampledPayload && size >= 16
    }

    /// Records a sample.
    package mutating func add(_ payload: UnsafeRawBufferPointer) {
        let sample = Array(payload.prefix(Self.sampleLimit))
        seen += 1
        if samples.count < capacity {
            samples.append(sample)
        } else {
            sampleBytes -= samples[next].count
            samples[next] = sample
            next = (next + 1) % capacity
        }
        sampleBytes += sample.count
    }

    /// Builds dictionary bytes from the samples: distinct ones, newest last, at most 64 KiB.
    package mutating func train() -> [UInt8] {
        seenAtLastTraining = seen
        let ordered = samples[next...] + samples[..<next]
        var chosen: [[UInt8]] = []
        var distinct = Set<[UInt8]>()
        var total = 0
        for sample in ordered.reversed() where total + sample.count <= CompressionDictionary.maximumSize {
            if distinct.insert(sample).inserted {
                chosen.append(sample)
                total += sample.count
            }
        }
        return Array(chosen.reversed().joined())
    }
}
