// y += a * x over n floats: the loop a CPU core runs one vector instruction per 8 or 16 elements of.
void axpy(float* __restrict y, const float* __restrict x, float a, int n) {
    for (int i = 0; i < n; ++i) {
        y[i] += a * x[i];
    }
}
