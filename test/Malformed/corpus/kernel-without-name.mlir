fa.kernel {
}
