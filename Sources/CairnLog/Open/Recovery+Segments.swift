/// Recovery's walk of the segments, frame by frame (``SegmentScan``).
extension Recovery {
    /// Walks one segment, checking every frame; the records after the base go to ``replay``.
    /// An active segment's walk ends at the writer's acknowledgement when the open reads no
    /// further (``acknowledged``; the base's frames are acknowledged whatever the file says).
    func scan(_ segment: Manifest.Segment, _ codec: PayloadCodec) throws -> SegmentScan {
        let path = layout.path(.segment, segment.number)
        let baseLSN = self.baseLSN
        let replay = self.replay
        var assembler = RecordAssembler()
        return try SegmentScan.scan(
            segment, layout: layout, io: io, storeID: manifest.storeID,
            maximumFrameSize: frameLimit, salvage: salvage, buffer: buffer, through: segment.isSealed ? nil : acknowledged.map { max($0, baseLSN) }
        ) { frame in
            // Frames the base holds are checked, not replayed; a record goes to replay once its
            // last frame is read (a torn tail's unfinished record never does).
            let replayed = replay != nil && frame.header.lsn > baseLSN
            if let record = try assembler.add(frame, codec, path: path, decode: replayed), replayed { try replay?(record) }
        }
    }

    /// Walks every segment the manifest lists, in order, and returns the active one's scan.
    /// Damage throws, except in salvage: it is reported, with the LSN ranges it lost.
    ///
    /// - Throws: ``LogError/Code/corruption`` when the active segment could not be read.
    mutating func scanListedSegments(_ codec: PayloadCodec) throws -> SegmentScan {
        var last: SegmentScan?
        for segment in manifest.segments {
            let result: SegmentScan
            do {
                result = try scan(segment, codec)
            } catch let error as LogError where salvage && error.code == .corruption {
                report.damage.append(error)
                // No overflow: Manifest.checkInvariants bounds first LSN + frame count.
                // (A segment sealed empty, before a record of several frames, lost nothing.)
                let lost = segment.isSealed && segment.frameCount > 0 ? segment.firstLSN...LSN(segment.firstLSN.rawValue + segment.frameCount - 1) : nil
                if let lost { report.lostRanges.append(lost) }
                continue
            }
            if let corruption = result.corruption {
                guard salvage else { throw corruption }
                report.damage.append(corruption)
            }
            report.lostRanges += result.lostRanges
            if let previous = last, previous.segment.isSealed, previous.nextLSN < segment.firstLSN, salvage {
                report.lostRanges.append(previous.nextLSN...segment.firstLSN.previous)
            }
            extents.append(SegmentExtent(segment: segment, path: result.path, end: result.validEnd, nextLSN: result.nextLSN, version: result.version))
            last = result
        }
        guard let active = last, let activeRecord = manifest.activeSegment, active.segment == activeRecord else {
            throw LogError.corruption("the active segment could not be read", path: layout.path(.segment, manifest.activeSegment?.number ?? 0))
        }
        nextLSN = active.nextLSN
        return active
    }

    /// Compaction syncs every frame up to the base's LSN before it installs the base: a log that
    /// ends before that LSN is damaged (salvage reads on).
    func checkEndAfterBase(_ active: SegmentScan) throws {
        if nextLSN <= baseLSN && !salvage {
            throw LogError.corruption(
                "the log ends at LSN \(nextLSN.previous), before the base's LSN \(baseLSN)", path: active.path, offset: active.validEnd)
        }
    }

    /// In salvage: reads the segments after the active one that the (stale) manifest does not
    /// list, reporting as damage each file that cannot be one of them or does not read.
    mutating func salvageUnlistedSegments(after active: SegmentScan, _ codec: PayloadCodec) throws {
        guard salvage else { return }
        for file in unaccounted {
            guard let header = file.header, header.storeID == manifest.storeID, header.number > active.segment.number,
                header.firstLSN <= .maximum,
                header.number == StoreLayout.parse(file.name)?.number, header.firstLSN >= nextLSN
            else {
                report.damage.append(file.refusal(layout))
                continue
            }
            let record = Manifest.Segment(
                number: header.number, epoch: header.epoch, firstLSN: header.firstLSN,
                isSealed: false, length: 0, frameCount: 0)
            let result: SegmentScan
            do { result = try scan(record, codec) } catch let error as LogError {
                report.damage.append(error)
                continue
            }
            if let corruption = result.corruption { report.damage.append(corruption) }
            if nextLSN < header.firstLSN { report.lostRanges.append(nextLSN...header.firstLSN.previous) }
            report.lostRanges += result.lostRanges
            report.unlistedSegmentsRead.append(file.name)
            extents.append(SegmentExtent(segment: record, path: result.path, end: result.validEnd, nextLSN: result.nextLSN, version: result.version))
            nextLSN = result.nextLSN
        }
    }
}
