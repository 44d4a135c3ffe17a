"""The bootstrap's clusters for MedVidBench (docs/statistics.md): a sample's video, so a video's
samples are drawn together. Pure Python, no Django."""

from __future__ import annotations

from collections.abc import Sequence

# The sample id is "video_id&&start_frame&&end_frame&&fps" (ground_truth.ID_FIELDS).
SAMPLE_ID_SEPARATOR = "&&"


def video_clusters(sample_ids: Sequence[str]) -> list[str]:
    """Each sample's video, the bootstrap's cluster key, read from its public sample id.

    `Sample.id` joins video_id, start frame, end frame and fps with "&&"; the video is what is
    left after splitting off the last three fields (the fps is a number, the frames are frame
    numbers in practice, so splitting from the right is safe even if a video id held "&&").
    """
    clusters = []
    for sample_id in sample_ids:
        parts = sample_id.rsplit(SAMPLE_ID_SEPARATOR, 3)
        if len(parts) != 4:
            raise ValueError(f"not a MedVidBench sample id (video&&start&&end&&fps): {sample_id!r}")
        clusters.append(parts[0])
    return clusters
