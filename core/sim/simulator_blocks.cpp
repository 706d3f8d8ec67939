// The simulator's thread blocks on the SMs: dispatch places the blocks of the kernels waiting for SMs as resources
// allow, blocksDone gives a batch's SMs back, and the batches' items are kept compact. The rest of the GPU side is
// simulator_gpu.cpp.
#include "simulator_state.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <limits>

namespace streamscope::sim_detail {

// Thread blocks go to SMs as resources allow, kernels in dispatch order (priority, then arrival): the first
// kernel takes what it can, later kernels get the leftovers. Running blocks are never preempted.
void Simulation::dispatch(int device)
{
    auto& dev = m_devices[size_t(device)];
    const int sms = dev.profile->smCount;
    if (m_batchItems.size() > 65536 && m_batchItems.size() > 4 * m_liveBatchItems)
        compactBatchItems();
    for (size_t i = 0; i < dev.dispatchList.size();) {
        const uint32_t g = dev.dispatchList[i];
        auto& k = m_ops[g];
        if (dev.sumFreeThreads < int64_t(k.threadsPerBlock)) {
            ++i;
            continue;
        }
        const auto first = uint32_t(m_batchItems.size());
        uint32_t blocks = 0;
        // Breadth first, as the hardware spreads blocks over SMs: at most an even share per SM first.
        const uint32_t share = (k.blocksLeft + uint32_t(sms) - 1) / uint32_t(sms);
        // Only SMs with room can take a block: visited in SM order, as a scan of all would place them. (The loop
        // runs for every SM a kernel's blocks go to, tens of millions of times in a big run: the counts are kept
        // in locals, a division is made only where an SM's threads or shared memory limit the blocks, and the SMs
        // that follow in the same state get the same blocks at once, as one item.)
        const auto perBlock = int32_t(k.threadsPerBlock);
        const int64_t sharedPerBlock = k.sharedPerBlock;
        DeviceState::SmFree* const smFree = dev.smFree.data();
        uint32_t left = k.blocksLeft;
        // The SMs it goes to, at most two visits (the two passes) of each SM: appended to m_batchItems at the end.
        m_placed.resize(std::max(m_placed.size(), 2 * size_t(sms)));
        BatchItem* const placed = m_placed.data();
        uint32_t count = 0;
        for (int pass = 0; pass < 2 && left > 0; ++pass) {
            const uint32_t most = pass == 0 ? share : std::numeric_limits<uint32_t>::max();
            for (size_t word = 0; word < dev.smsWithRoom.size() && left > 0; ++word) {
                uint64_t full = 0; // SMs of this word left without room
                uint64_t room = dev.smsWithRoom[word];
                while (room != 0 && left > 0) {
                    const int bit = std::countr_zero(room);
                    const size_t s = word * 64 + size_t(bit);
                    const DeviceState::SmFree before = smFree[s];
                    // n = min(blocks left, the pass's share, free block slots, free threads / threads per block,
                    // free shared memory / shared memory per block).
                    uint32_t n = std::min(std::min(left, most), uint32_t(before.blocks));
                    if (int64_t(n) * perBlock > before.threads)
                        n = uint32_t(before.threads / perBlock);
                    if (sharedPerBlock > 0 && int64_t(n) * sharedPerBlock > before.shared)
                        n = std::min(n, uint32_t(before.shared / sharedPerBlock));
                    if (n == 0) {
                        room &= room - 1;
                        continue;
                    }
                    // The next SMs with room in the same state get n each while n blocks are left for them (n is
                    // min(blocks left, what the state allows), so the j-th gets n exactly while left - j n >= n).
                    const auto run = uint32_t(std::countr_one(room >> bit));
                    const uint32_t mostSms = std::min(run, left / n);
                    uint32_t m = 1;
                    while (m < mostSms && smFree[s + m] == before)
                        ++m;
                    const DeviceState::SmFree after{before.blocks - int32_t(n), before.threads - int32_t(n) * perBlock,
                                                    before.shared - int64_t(n) * sharedPerBlock};
                    assert(after.blocks >= 0 && after.threads >= 0 && after.shared >= 0);
                    std::fill_n(smFree + s, m, after);
                    const uint64_t mask = (m == 64 ? ~uint64_t(0) : (uint64_t(1) << m) - 1) << bit;
                    if (after.blocks <= 0 || after.threads <= 0)
                        full |= mask;
                    room &= ~mask;
                    left -= m * n;
                    blocks += m * n;
                    BatchItem* const last = count > 0 ? &placed[count - 1] : nullptr;
                    if (last && last->blocks == n && size_t(last->sm) + last->sms == s && last->sms + m <= 0xffff)
                        last->sms = uint16_t(last->sms + m);
                    else
                        placed[count++] = {uint16_t(s), uint16_t(m), n};
                }
                dev.smsWithRoom[word] &= ~full;
            }
        }
        k.blocksLeft = left;
        dev.sumFreeThreads -= int64_t(blocks) * k.threadsPerBlock;
        m_batchItems.insert(m_batchItems.end(), placed, placed + count);
        if (count > 0) {
            if (k.start < 0) {
                k.start = m_now;
                touchL2(g);
                // Queued for the SMs earlier: held until the blocks of m_freedBy gave some back.
                if (m_now > k.queuedAt)
                    holdBy(k, WaitCause::Sms, m_freedBy);
            }
            // Its end is set with its rate, below (setRates).
            const Batch batch{g, first, count, blocks, double(k.blockNs), 0.0, m_now, -1, false};
            uint32_t slot = 0;
            if (m_freeBatches.empty()) {
                slot = uint32_t(m_batches.size());
                m_batches.push_back(batch);
            } else {
                slot = m_freeBatches.back();
                m_freeBatches.pop_back();
                m_batches[slot] = batch;
            }
            m_liveBatchItems += count;
            dev.runningBatches.push_back(slot);
            if (k.resident == 0)
                dev.runningKernels.push_back(g);
            k.resident += blocks;
        }
        if (k.blocksLeft == 0)
            dev.dispatchList.erase(dev.dispatchList.begin() + std::ptrdiff_t(i));
        else
            ++i;
    }
    setRates(dev);
}

// A batch's end: only the event at its current end counts (a change of its rate moved it).
void Simulation::blocksDone(uint32_t b)
{
    if (m_batches[b].done || m_batches[b].end != m_now)
        return;
    m_batches[b].done = true;
    const Batch batch = m_batches[b];
    m_liveBatchItems -= batch.count;
    auto& k = m_ops[batch.kernel];
    auto& dev = m_devices[size_t(k.device)];
    std::erase(dev.runningBatches, b);
    k.resident -= batch.blocks;
    if (k.resident == 0)
        std::erase(dev.runningKernels, batch.kernel);
    DeviceState::SmFree* const smFree = dev.smFree.data();
    const auto perBlock = int32_t(k.threadsPerBlock);
    const int64_t sharedPerBlock = k.sharedPerBlock;
    const BatchItem* const items = m_batchItems.data() + batch.first;
    for (uint32_t i = 0; i < batch.count; ++i) {
        const auto [first, sms, n] = items[i];
        const auto blocks = int32_t(n);
        const int32_t threads = int32_t(n) * perBlock;
        const int64_t shared = int64_t(n) * sharedPerBlock;
        for (DeviceState::SmFree* f = smFree + first; f != smFree + first + sms; ++f) {
            f->blocks += blocks;
            f->threads += threads;
            f->shared += shared;
        }
        // Each of these SMs now has n >= 1 block slots and n * threadsPerBlock >= 1 threads free (free counts are
        // never negative): room, as DeviceState::updateRoom would set.
        dev.setRoom(first, sms);
    }
    dev.sumFreeThreads += int64_t(batch.blocks) * k.threadsPerBlock;
    k.blocksDone += batch.blocks;
    if (k.blocksDone == k.blocksTotal)
        complete(batch.kernel);
    m_freedBy = batch.kernel;
    dispatch(k.device);
    m_freedBy = kNone;
}

// A BlocksDone event of batch b left the queue: a finished batch with no event left in the queue frees its slot (an
// event of a reused slot would otherwise be taken for one of its new batch).
void Simulation::batchEventPopped(uint32_t b)
{
    auto& batch = m_batches[b];
    --batch.pending;
    if (batch.done && batch.pending == 0)
        m_freeBatches.push_back(b);
}

// Drops the items of finished batches: the running batches' items move to the front, in the order they were
// dispatched, within the same vector (a vector of their own each time grew and faulted fresh pages in again).
void Simulation::compactBatchItems()
{
    std::vector<uint32_t> running;
    for (const auto& dev : m_devices)
        running.insert(running.end(), dev.runningBatches.begin(), dev.runningBatches.end());
    std::sort(running.begin(), running.end(),
              [this](uint32_t a, uint32_t b) { return m_batches[a].first < m_batches[b].first; });
    uint32_t to = 0;
    for (uint32_t b : running) {
        auto& batch = m_batches[b];
        // to <= batch.first: each batch moves towards the front, over items of finished ones or its own.
        std::copy(m_batchItems.begin() + batch.first, m_batchItems.begin() + batch.first + batch.count,
                  m_batchItems.begin() + to);
        batch.first = to;
        to += batch.count;
    }
    m_batchItems.resize(to);
}

} // namespace streamscope::sim_detail
