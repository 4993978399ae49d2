#!/usr/bin/env python3
"""Write the text images of the OCR tests (tests/data/ocr/*.png).

Usage: python3 scripts/make-ocr-images.py    (needs Pillow, pip install pillow,
and the DejaVu Sans font of Debian's fonts-dejavu-core)

Each line is black DejaVu Sans on white, drawn here (so the images are the
project's own, CC0); page.png holds every line, one under another,
page-upside-down.png the same page turned half a turn, and page-boxes.txt
the lines' boxes (x y w h per line).
Deterministic for a given Pillow and font.
"""
import os

from PIL import Image, ImageDraw, ImageFont

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "tests", "data", "ocr")
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
LINES = ["Hello clinfer 2026", "GStreamer pipelines", "Invoice No. 4711",
         "ab c", "THE QUICK BROWN FOX", "price: 12.50 EUR"]


def main():
    os.makedirs(OUT, exist_ok=True)
    font = ImageFont.truetype(FONT, 28)
    images = []
    for i, text in enumerate(LINES):
        w = int(font.getlength(text)) + 20
        im = Image.new("RGB", (w, 44), "white")
        ImageDraw.Draw(im).text((10, 6), text, fill="black", font=font)
        im.save(os.path.join(OUT, "line%d.png" % i))
        images.append(im)
    width = max(im.width for im in images) + 40
    page = Image.new("RGB", (width, 20 + 60 * len(images)), "white")
    boxes = []
    for i, im in enumerate(images):
        x, y = 20 + 7 * i, 20 + 60 * i
        page.paste(im, (x, y))
        boxes.append("%d %d %d %d" % (x, y, im.width, im.height))
    page.save(os.path.join(OUT, "page.png"))
    page.rotate(180).save(os.path.join(OUT, "page-upside-down.png"))
    with open(os.path.join(OUT, "page-boxes.txt"), "w") as f:
        f.write("\n".join(boxes) + "\n")
    print("wrote %d lines and page.png to %s" % (len(LINES), OUT))


if __name__ == "__main__":
    main()
