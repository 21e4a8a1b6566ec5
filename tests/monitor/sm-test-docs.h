/* Admin API documents both samsa-monitor tests feed (monitor-model and
 * monitor-ui; broker/README.md, "The admin API"). */
#pragma once

/* shown-0 as its leader, broker 0, shows it while it moves from 0,1,2 to
 * 1,2,3: broker 3 being added at 1 of 12, broker 0 being removed */
#define SMT_SHOWN_0_MOVING                                                                         \
    "{\"topic\":\"shown\",\"partition\":0,"                                                         \
    "\"leader\":0,\"leader_epoch\":2,\"high_watermark\":12,\"log_start_offset\":0,"                 \
    "\"log_end_offset\":12,\"led_here\":true,\"isr\":[0,1,2],"                                      \
    "\"replicas\":[{\"broker\":1,\"log_end_offset\":12,\"in_sync\":true},"                          \
    "{\"broker\":2,\"log_end_offset\":12,\"in_sync\":true},"                                        \
    "{\"broker\":3,\"log_end_offset\":1,\"in_sync\":false},"                                        \
    "{\"broker\":0,\"log_end_offset\":12,\"in_sync\":true}],"                                       \
    "\"reassignment\":{\"target\":[1,2,3],\"adding\":[3],\"removing\":[0]}}"
