"""Random-forest anchor of the DGA evaluation: the model family Python HAMSTRING ships, trained
on exactly the features and folds `npm run eval:dga` wrote, so its figures sit beside ours.

Usage: python rf.py <dir>   (reads fold-<k>-train.csv and fold-<k>-test.csv, writes fold-<k>-rf.csv)
"""
import glob
import os
import sys

import numpy as np
from sklearn.ensemble import RandomForestClassifier


def load(path):
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    return data[:, 1:], data[:, 0]


def main(folder):
    for train_path in sorted(glob.glob(os.path.join(folder, "fold-*-train.csv"))):
        test_path = train_path.replace("-train.csv", "-test.csv")
        x, y = load(train_path)
        forest = RandomForestClassifier(n_estimators=200, min_samples_leaf=2, n_jobs=-1, random_state=0)
        forest.fit(x, y)
        tx, _ = load(test_path)
        scores = forest.predict_proba(tx)[:, 1]
        np.savetxt(train_path.replace("-train.csv", "-rf.csv"), scores, fmt="%.6f")
        print(f"{os.path.basename(train_path)}: {len(y)} rows, scored {len(scores)}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
