"""A synthetic MedSG-Bench test set with tiny generated images and example predictions.

The real evaluation file and its 9,630 image sequences are not needed to run the platform: the
demo writes a file of the same shape (`{task, question, images, answer, size?}`), 10 items for
each of the 8 tasks, 2-4 images per item, and four predictions files, one per box convention,
of different quality:

- `pixel`: near perfect, text `(x1,y1),(x2,y2)` within a pixel of the reference;
- `norm1000`: noisy boxes as lists on the 0-1000 scale;
- `unit`: noisier text `[x1, y1, x2, y2]` as fractions of the image;
- `yxyx_norm1000`: Gemini-style JSON text `{"box_2d": [y1, x1, y2, x2]}`, some answers with no
  box at all (unparsed) and one with two boxes (only the first counts).

Images are 336x336 grayscale PNGs (a `multi_view` item's are smaller and non-square, with its
`size` given): a grey "body" ellipse and, in the image the question is about, a bright lesion
filling the reference box. They are drawn with numpy and written with zlib and struct, as
plugins/medvidbench/demo_testset/frames.py writes MedVidBench's frames: Pillow is not a dependency and
an 8-bit grayscale PNG is two short chunks.

Pure Python + numpy, no Django. Everything is drawn from `random.Random` seeded with strings,
so one seed always gives byte-identical JSON (no `hash()`, no set iteration, no clock).
"""

from __future__ import annotations

import json
import random
import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from plugins.medsg.scoring.boxes import NORM1000, PIXEL, UNIT, YXYX_NORM1000
from plugins.medsg.scoring.testset import TASKS

ITEMS_PER_TASK = 10
IMAGE_SIZE = 336
MULTI_VIEW_SIZES = ((224, 160), (192, 256), (256, 192))
IMAGES_DIR = "images"
TESTSET_FILENAME = "medsg_testset.json"
# Each example predictions file and the box format its submission declares.
PREDICTION_FILES = {
    PIXEL: "predictions_pixel_near_perfect.json",
    NORM1000: "predictions_norm1000_noisy.json",
    UNIT: "predictions_unit_noisy.json",
    YXYX_NORM1000: "predictions_gemini_yxyx_some_unparsed.json",
}
UNPARSED_ANSWERS = (
    "I cannot localise the region with confidence from these images.",
    "The lesion appears in the second image, near the upper left.",
    "No difference was found between the images.",
)
QUESTIONS = {
    "Registered_Diff": "The images are registered scans of one patient. Locate the region that "
    "changed in the last image.",
    "Non_Registered_Diff": "The images are scans of one patient taken at different times, not "
    "registered. Locate the region that changed in the last image.",
    "multi_view": "The images show one structure from different views. Locate it in the last "
    "image.",
    "object_tracking": "Track the marked lesion of the first image and locate it in the last "
    "image.",
    "concept": "The first images show a lesion type. Locate a lesion of the same type in the "
    "last image.",
    "patch": "The first image is a patch. Locate the region it was cut from in the last image.",
    "crossmodal": "The images are different modalities of one patient. Locate in the last "
    "image the structure marked in the first.",
    "referring": "Identify the bounding box of the region described by the following "
    "expression: the bright lesion.",
}


def write_demo(folder: Path, seed: int = 0) -> dict[str, Path]:
    """Write the test set, its images and the four predictions files under `folder`.

    Returns the paths by name: "testset", "images" (the folder of PNGs) and one per box
    format ("pixel", "norm1000", "unit", "yxyx_norm1000"). The test set refers to its images
    by paths relative to the JSON file's folder. Existing files are overwritten."""
    folder = Path(folder)
    records, images = generate_testset(seed)
    (folder / IMAGES_DIR).mkdir(parents=True, exist_ok=True)
    for relative, pixels in images.items():
        (folder / relative).write_bytes(png_bytes(pixels))
    paths = {"testset": folder / TESTSET_FILENAME, "images": folder / IMAGES_DIR}
    _write_json(paths["testset"], records)
    for box_format, filename in PREDICTION_FILES.items():
        paths[box_format] = folder / filename
        _write_json(paths[box_format], make_predictions(records, box_format, seed))
    return paths


def _write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def generate_testset(seed: int = 0) -> tuple[list[dict[str, Any]], dict[str, np.ndarray]]:
    """The evaluation records and their images ({relative path: (h, w) uint8 pixels})."""
    records: list[dict[str, Any]] = []
    images: dict[str, np.ndarray] = {}
    for task in TASKS:
        for number in range(ITEMS_PER_TASK):
            rng = random.Random(f"medsg-demo:{seed}:{task}:{number}")
            if task == "multi_view":
                width, height = rng.choice(MULTI_VIEW_SIZES)
            else:
                width = height = IMAGE_SIZE
            box = _reference_box(rng, width, height)
            count = rng.randint(2, 4)
            paths = []
            for position in range(count):
                relative = f"{IMAGES_DIR}/{task}_{number:02d}_{position + 1}.png"
                lesion = box if position == count - 1 else _decoy(rng, width, height, task, box)
                images[relative] = draw_image(rng, width, height, lesion)
                paths.append(relative)
            record: dict[str, Any] = {
                "task": task,
                "question": "".join(f"Image-{i + 1}: <image>\n" for i in range(count))
                + QUESTIONS[task],
                "images": paths,
                "answer": list(box),
            }
            if task == "multi_view":
                record["size"] = [width, height]
            records.append(record)
    return records, images


def _reference_box(rng: random.Random, width: int, height: int) -> tuple[int, int, int, int]:
    box_width = rng.randint(width // 10, width // 3)
    box_height = rng.randint(height // 10, height // 3)
    x1 = rng.randint(width // 8, width - width // 8 - box_width)
    y1 = rng.randint(height // 8, height - height // 8 - box_height)
    return (x1, y1, x1 + box_width, y1 + box_height)


def _decoy(
    rng: random.Random, width: int, height: int, task: str, box: tuple[int, int, int, int]
) -> tuple[int, int, int, int] | None:
    """What the earlier images show: nothing for a difference task (the lesion is new), the
    lesion for tracking, a lesion elsewhere for the others."""
    if task in ("Registered_Diff", "Non_Registered_Diff"):
        return None
    if task == "object_tracking":
        dx, dy = rng.randint(-8, 8), rng.randint(-8, 8)
        return (box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy)
    return _reference_box(rng, width, height)


def draw_image(
    rng: random.Random, width: int, height: int, lesion: tuple[int, int, int, int] | None
) -> np.ndarray:
    """(height, width) uint8: a dark background, a grey body ellipse, a bright lesion filling
    `lesion` (xyxy pixels) when given."""
    rows, columns = np.mgrid[0:height, 0:width]
    pixels = np.full((height, width), 12, dtype=np.uint8)
    centre_x, centre_y = width / 2 + rng.randint(-6, 6), height / 2 + rng.randint(-6, 6)
    radius_x, radius_y = width * 0.42, height * 0.38
    body = ((columns - centre_x) / radius_x) ** 2 + ((rows - centre_y) / radius_y) ** 2 <= 1.0
    pixels[body] = 70 + rng.randint(0, 30)
    if lesion is not None:
        x1, y1, x2, y2 = lesion
        pixels[max(0, y1) : max(0, y2), max(0, x1) : max(0, x2)] = 220
    return pixels


def png_bytes(pixels: np.ndarray) -> bytes:
    """An 8-bit grayscale PNG of `pixels` ((h, w) uint8), each row with filter 0 (none)."""
    height, width = pixels.shape

    def chunk(kind: bytes, data: bytes) -> bytes:
        checksum = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", checksum)

    rows = np.zeros((height, width + 1), dtype=np.uint8)
    rows[:, 1:] = pixels
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit grayscale
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows.tobytes(), 9))
        + chunk(b"IEND", b"")
    )


def make_predictions(
    records: list[dict[str, Any]], box_format: str, seed: int = 0
) -> list[dict[str, Any]]:
    """One example submission's rows in `box_format` (see the module docstring)."""
    rows = []
    for index, record in enumerate(records):
        rng = random.Random(f"medsg-demo-predictions:{seed}:{box_format}:{index}")
        width, height = record.get("size") or (IMAGE_SIZE, IMAGE_SIZE)
        x1, y1, x2, y2 = record["answer"]
        rows.append(
            {
                "index": index,
                "task": record["task"],
                "prediction": _prediction(rng, box_format, (x1, y1, x2, y2), width, height),
            }
        )
    return rows


def _jitter(
    rng: random.Random, box: tuple[float, ...], spread: float, width: int, height: int
) -> tuple[float, float, float, float]:
    """`box` with each edge moved by a Gaussian of `spread` times the box's own size."""
    x1, y1, x2, y2 = box
    box_width, box_height = x2 - x1, y2 - y1
    return (
        x1 + rng.gauss(0, spread) * box_width,
        y1 + rng.gauss(0, spread) * box_height,
        x2 + rng.gauss(0, spread) * box_width,
        y2 + rng.gauss(0, spread) * box_height,
    )


def _prediction(
    rng: random.Random, box_format: str, box: tuple[float, ...], width: int, height: int
) -> str | list[float]:
    if box_format == PIXEL:
        x1, y1, x2, y2 = (round(value + rng.choice((-1, 0, 0, 1))) for value in box)
        return f"({x1},{y1}),({x2},{y2})"
    if box_format == NORM1000:
        x1, y1, x2, y2 = _jitter(rng, box, 0.12, width, height)
        return [
            round(x1 * 1000 / width),
            round(y1 * 1000 / height),
            round(x2 * 1000 / width),
            round(y2 * 1000 / height),
        ]
    if box_format == UNIT:
        x1, y1, x2, y2 = _jitter(rng, box, 0.25, width, height)
        return f"[{x1 / width:.3f}, {y1 / height:.3f}, {x2 / width:.3f}, {y2 / height:.3f}]"
    # yxyx_norm1000, Gemini's JSON answer; a fifth of the answers give no box.
    if rng.random() < 0.2:
        return rng.choice(UNPARSED_ANSWERS)
    x1, y1, x2, y2 = _jitter(rng, box, 0.15, width, height)
    first = [
        round(y1 * 1000 / height),
        round(x1 * 1000 / width),
        round(y2 * 1000 / height),
        round(x2 * 1000 / width),
    ]
    boxes = [{"box_2d": first, "label": "lesion"}]
    if rng.random() < 0.1:  # a second box: only the first is scored
        boxes.append({"box_2d": [0, 0, 1000, 1000], "label": "image"})
    return "```json\n" + json.dumps(boxes) + "\n```"
