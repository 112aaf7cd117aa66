package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

/** How many grant ids a renewal chunk's statements take, whatever the chunk's size. */
class LeaseRenewalSlotsTest {

    @Test
    void aChunkTakesTheNextPowerOfTwoOfSlots() {
        assertThat(LeaseRenewal.slots(1)).isEqualTo(1);
        assertThat(LeaseRenewal.slots(3)).isEqualTo(4);
        assertThat(LeaseRenewal.slots(64)).isEqualTo(64);
        assertThat(LeaseRenewal.slots(65)).isEqualTo(128);
    }

    @Test
    void aChunkAboveTheLastPowerOfTwoBelowTheChunkSizeTakesTheChunkSize() {
        assertThat(LeaseRenewal.slots(256)).isEqualTo(256);
        assertThat(LeaseRenewal.slots(257)).isEqualTo(LeaseRenewal.CHUNK);
        assertThat(LeaseRenewal.slots(LeaseRenewal.CHUNK)).isEqualTo(LeaseRenewal.CHUNK);
    }

    @Test
    void renewalsOfEveryChunkSizeUseTenStatementShapes() {
        Set<Integer> shapes = new TreeSet<>();
        for (int size = 1; size <= LeaseRenewal.CHUNK; size++) {
            assertThat(LeaseRenewal.slots(size)).isGreaterThanOrEqualTo(size);
            shapes.add(LeaseRenewal.slots(size));
        }
        assertThat(shapes).hasSize(10);
    }
}
